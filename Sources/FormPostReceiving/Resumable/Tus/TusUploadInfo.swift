#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart
import ResumableHTTP

/// What is kept of a tus upload besides its bytes: its declared length (once known), the client's
/// metadata, when it began, the completion under way, and once complete the stored file. Saved as JSON beside the
/// upload's data, so that an upload survives a restart of the server.
struct TusUploadInfo: Codable, Equatable, Sendable {
    /// `Upload-Length`: the size of the whole upload; nil while the client defers it
    /// (`Upload-Defer-Length: 1`, until an append declares it).
    var length: Int64?
    /// `Upload-Metadata` as the client sent it.
    var metadata: String?
    /// When the upload was created, in seconds since 1970.
    var created: Double
    /// The stored file, once every byte has arrived.
    var file: Receipt.File?
    /// While an append with an `Upload-Checksum` is written: the offset it began at, up to
    /// which the data counts (its own bytes count only once their checksum holds). Saved
    /// before it writes and removed once it is settled, so that a server killed meanwhile
    /// answers this offset when it is back, and the next append cuts off the bytes past it.
    var verified: Int64?
    /// Once every byte has arrived, while it is stored: the name and SHA-256 it is stored
    /// with, saved before anything is stored, so that a completion taken up again after a
    /// crash stores it once, under that name. Nil once ``file`` is set.
    var completing: UploadCompletion?
    /// The address of the client that created it (``ClientAddress``), nil when unknown:
    /// uploads in progress are counted per client address.
    var client: String?
    /// The metadata the upload's authorization granted (``UploadGrant/metadata``), for its
    /// events; nil when none was.
    var granted: [String: String]?
    /// Its part in a concatenation (`Upload-Concat`), nil for an upload of its own.
    var concat: TusConcatenation?
    /// For a partial upload whose bytes a final upload has taken: that upload's ID. Its data
    /// is gone; it answers as complete, and a final naming the same partial uploads again
    /// is answered with that one.
    var joinedInto: String?
    /// For a partial upload named by a final upload before it was complete
    /// (concatenation-unfinished): that upload's ID, joined once every partial upload it
    /// names is.
    var awaitedBy: String?

    /// The final upload it was joined into, or that awaits it; nil for none.
    var finalNamed: String? { joinedInto ?? awaitedBy }

    /// The bytes an append from `offset` may add: up to ``length``, or while it is deferred
    /// up to `limit` (the largest upload).
    func room(from offset: Int64, limit: Int64) -> Int64 {
        (length ?? limit) - offset
    }

    /// Whether `offset` is the whole upload: its length is known and reached.
    func isWhole(at offset: Int64) -> Bool {
        length == offset
    }

    /// Whether the upload is stored once `offset` is the whole of it: a partial upload of a
    /// concatenation is not (its bytes are stored only as part of the final upload).
    func completes(at offset: Int64) -> Bool {
        concat != .partial && isWhole(at: offset)
    }

    /// Whether it is a final upload whose partial uploads are not joined yet, at `offset`.
    func isAwaiting(at offset: Int64) -> Bool {
        guard case .final = concat else { return false }
        return file == nil && completing == nil && !isWhole(at: offset)
    }

    /// The decoded metadata: keys, and values decoded from base64 (empty when absent).
    var metadataValues: [String: String] { TusMetadata.decode(metadata ?? "") }

    /// This upload, `id`, stored as `completion` says (in `bucket`, for object storage):
    /// its ``file`` as a `Receipt` names it.
    func completed(id: String, as completion: UploadCompletion, bucket: String? = nil) -> TusUploadInfo {
        let values = metadataValues
        var done = self
        done.completing = nil
        done.file = Receipt.File(name: "file", filename: values["filename"] ?? values["name"] ?? id, contentType: values["filetype"] ?? values["type"],
                                 size: length ?? 0, sha256: completion.sha256, storedAs: completion.storedAs, bucket: bucket)
        return done
    }

    /// The upload as its `post-finish` event tells it, once stored: created by `POST` on
    /// `basePath`, from its ``client``, its receipt the stored ``file``, with the metadata
    /// its authorization ``granted``.
    func event(basePath: String) -> UploadEvent.Upload {
        UploadEvent.Upload(protocol: .tus, method: "POST", path: basePath, client: client, receipt: Receipt(files: file.map { [$0] } ?? []),
                           metadata: granted)
    }
}

/// A tus upload in either store: stored once its ``file`` is set.
extension TusUploadInfo: DirectoryUploadInfo {
    static var uploadProtocol: UploadProtocol { .tus }
    var knownLength: Int64? { length }
    var isStored: Bool { file != nil }
    var isJoined: Bool { joinedInto != nil }
    var isPartial: Bool { concat == .partial }

    var joinsUploads: Bool {
        guard case .final = concat else { return false }
        return true
    }

    var objectContentType: String? {
        let values = metadataValues
        return values["filetype"] ?? values["type"]
    }

    func stored(id: String, as completion: UploadCompletion, bucket: String?) -> TusUploadInfo {
        completed(id: id, as: completion, bucket: bucket)
    }

    func finishedEvent(basePath: String) -> UploadEvent.Upload {
        event(basePath: basePath)
    }
}
