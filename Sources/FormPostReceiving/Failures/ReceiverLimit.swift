import Multipart

/// Which of ``ReceiverConfiguration``'s bounds a request crossed, named as the property that
/// sets it (the parser's header bound, which the configuration does not change, by its own name).
enum ReceiverLimit: String, Sendable {
    case maxBodySize
    case maxFileSize
    case maxParts
    case maxFieldSize
    case maxTotalFieldBytes
    case maxHeaderBytes
    /// The limit a signed upload URL sets (``UploadURLSigner``).
    case signedMaxBytes = "X-FormPost-Max-Bytes"
    /// The limit an authorization sets (``UploadGrant/maxBytes``).
    case authorizedMaxBytes = "maxBytes (of the upload's authorization)"

    /// The receiver's bound that the parser's `limit` enforces for it.
    init(_ limit: MultipartLimit) {
        switch limit {
        case .maxTotalBytes: self = .maxBodySize
        case .maxPartBytes: self = .maxFileSize
        case .maxParts: self = .maxParts
        case .maxHeaderBytes: self = .maxHeaderBytes
        }
    }
}
