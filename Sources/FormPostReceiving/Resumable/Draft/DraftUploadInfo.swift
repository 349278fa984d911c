#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// What is kept of an upload of the IETF draft besides its bytes: what the request that
/// created it targeted, the representation's length once known, and once complete the
/// target's answer. Saved as JSON beside the upload's data, so that an upload survives a
/// restart of the server.
struct DraftUploadInfo: Codable, Equatable, Sendable {
    /// When the upload was created, in seconds since 1970.
    var created: Double
    /// The representation's length (`Upload-Length`, or deduced), once known.
    var length: Int64?
    /// The method of the request that created it.
    var method: String
    /// The path it targeted.
    var path: String
    /// The representation's `Content-Type`.
    var contentType: String
    /// The representation's `Content-Disposition`, naming a file.
    var contentDisposition: String?
    /// The target's answer to the whole representation, once complete.
    var answer: StoredAnswer?
    /// Once every byte of a representation that is not a form has arrived, while it is
    /// stored: the name and SHA-256 it is stored with, saved before anything is stored, so
    /// that a completion taken up again after a crash stores it once, under that name, and
    /// answers the same receipt.
    var completing: UploadCompletion?
    /// Once a form is complete and its answer saved, while its files are moved into the
    /// directory: the names they are stored under, in order (``ResumableForms``).
    var storingParts: [String]?
    /// The address of the client that created it (``ClientAddress``), nil when unknown:
    /// uploads in progress are counted per client address.
    var client: String?
    /// The metadata the upload's authorization granted (``UploadGrant/metadata``), for its
    /// events; nil when none was.
    var granted: [String: String]?

    /// The ``UploadEvent/id`` of a form's `post-finish` event, saved with ``storingParts``
    /// so that a completion taken up again records the same event.
    var event: String?
    /// Nil: every append of the draft counts as it reaches the disk (it carries no checksum).
    var verified: Int64?

    /// The upload as its `post-finish` event tells it, once stored as `receipt`: the
    /// creation's method and path, from its ``client``, with the metadata its authorization ``granted``.
    func event(receipt: Receipt) -> UploadEvent.Upload {
        UploadEvent.Upload(protocol: .ietf, method: method, path: path, client: client, receipt: receipt, metadata: granted)
    }

    /// Whether the representation is a form, which the receiver parses.
    var isForm: Bool { contentType.lowercased().hasPrefix("multipart/form-data") }
}

extension DraftUploadInfo {
    /// The receipt of this representation (not a form) of `size` bytes, stored as
    /// `completion` says (in `bucket`, for object storage): one file, named by its
    /// `Content-Disposition`, else by the upload's `id`.
    func receipt(id: String, size: Int64, as completion: UploadCompletion, bucket: String? = nil) -> Receipt {
        let filename = contentDisposition.flatMap { ContentDispositionValue(parsing: $0)?.filename } ?? id
        return Receipt(fields: [], files: [Receipt.File(name: "file", filename: filename, contentType: contentType, size: size,
                                                        sha256: completion.sha256, storedAs: completion.storedAs, bucket: bucket)])
    }
}

/// A draft upload in either store (in object storage, never a form): stored once its
/// ``answer`` is set.
extension DraftUploadInfo: DirectoryUploadInfo {
    static var uploadProtocol: UploadProtocol { .ietf }
    var knownLength: Int64? { length }
    var isStored: Bool { answer != nil }
    /// False: the draft has no concatenation.
    var isJoined: Bool { false }
    /// False: the draft has no concatenation.
    var isPartial: Bool { false }
    var joinsUploads: Bool { false }
    var objectContentType: String? { contentType }

    func stored(id: String, as completion: UploadCompletion, bucket: String?) -> DraftUploadInfo {
        var done = self
        done.completing = nil
        let receipt = receipt(id: id, size: length ?? 0, as: completion, bucket: bucket)
        done.answer = StoredAnswer(status: 200, json: String(decoding: UploadReceiver.encodeJSON(receipt), as: UTF8.self))
        return done
    }

    /// Whether `offset` is the whole representation, which is not a form (a form is
    /// completed by its own parse).
    func completes(at offset: Int64) -> Bool {
        !isForm && length == offset
    }

    /// A form's files moved into the directory, if its answer was saved and they were not
    /// all moved (``ResumableForms/settle(_:info:in:)``).
    func settled(_ id: String, in store: UploadStore) throws -> DraftUploadInfo {
        try ResumableForms.settle(id, info: self, in: store)
    }

    /// A form's: what its parse took (``ResumableForms/offset(of:in:)``); else the size of its
    /// data, 0 without any.
    func dataOffset(of id: String, in store: UploadStore) -> Int64? {
        isForm ? ResumableForms.offset(of: id, in: store) : store.offset(id)
    }

    /// Its event: the receipt answered, if its answer was one (200); else an empty receipt.
    func finishedEvent(basePath: String) -> UploadEvent.Upload {
        event(receipt: answer.flatMap { $0.status == 200 ? try? JSONDecoder().decode(Receipt.self, from: Data($0.json.utf8)) : nil } ?? Receipt())
    }
}
