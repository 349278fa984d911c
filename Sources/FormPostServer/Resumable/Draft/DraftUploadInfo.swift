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
struct DraftUploadInfo: Codable {
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

    /// The upload as its `post-finish` event tells it, once stored as `receipt`: the
    /// creation's method and path, from its ``client``, with the metadata its authorization ``granted``.
    func event(receipt: Receipt) -> UploadEvent.Upload {
        UploadEvent.Upload(protocol: .ietf, method: method, path: path, client: client, receipt: receipt, metadata: granted)
    }

    /// Whether the representation is a form, which the receiver parses.
    var isForm: Bool { contentType.lowercased().hasPrefix("multipart/form-data") }
}
