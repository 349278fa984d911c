import FormPostReceiving
import Synchronization

/// Whether the store implements object tagging: Cloudflare R2 answers 501 `NotImplemented`
/// to `PutObjectTagging`. Found by ``ObjectStorage/check()``, or by the first tag refused so;
/// a store without it keeps a multipart object's SHA-256 in the receipt, the upload's state
/// and its events only (a small object has it in its metadata either way).
package final class S3Tagging: Sendable {
    private let supported = Mutex(true)

    package init() {}

    /// Whether tags are written.
    package var isSupported: Bool { supported.withLock { $0 } }

    /// Records that the store does not implement tagging.
    package func markUnsupported() {
        supported.withLock { $0 = false }
    }

    /// Whether `failure` says that the store does not implement tagging: 501 or
    /// `NotImplemented`; when `probing` (the probe object, at start), also 405,
    /// `MethodNotAllowed`, or `InvalidArgument` where the store takes `tagging` for an
    /// argument it does not know — answers that, to one object later, may mean that object
    /// only (S3 answers 405 for a delete marker). A refusal of the credentials (403) is
    /// never such an answer.
    package static func saysUnsupported(_ failure: ObjectStorageError, probing: Bool) -> Bool {
        guard case .refused(_, let status, let code, _) = failure else { return false }
        if status == 501 || code == "NotImplemented" { return true }
        return probing && (status == 405 || code == "MethodNotAllowed" || code == "InvalidArgument")
    }
}
