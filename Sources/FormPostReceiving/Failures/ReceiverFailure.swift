#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a receiver refused or failed a request; each maps to an HTTP status.
enum ReceiverFailure: Error {
    case limitExceeded(ReceiverLimit, value: Int64)
    /// The file system is full (or the quota reached): 507.
    case insufficientStorage(String)
    case storage(String)
    /// The upload cannot be taken now, though nothing is wrong with it (the outbox of
    /// events is full): 503 with `Retry-After`; the detail is for the log.
    case unavailable(String)
    case methodNotAllowed(String)
    case unsupportedMediaType(String)
}

extension ReceiverFailure {
    /// A failure to store an upload: ``insufficientStorage(_:)`` when the file system is
    /// full or the quota reached, else ``storage(_:)``; `what` and the system's message are
    /// kept for the log.
    static func storing(_ what: String, errno code: Int32) -> ReceiverFailure {
        let detail = "\(what): \(String(cString: strerror(code)))"
        return code == ENOSPC || code == EDQUOT ? .insufficientStorage(detail) : .storage(detail)
    }
}
