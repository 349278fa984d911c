/// Why a resumable upload stopped.
public enum ResumableUploadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server does not speak the protocol (tus answers 412, or lacks an extension; a
    /// target that answers the IETF draft's creation without an upload resource).
    case protocolUnsupported(status: Int, detail: String)
    /// The server answered `status` where it should have answered otherwise.
    case unexpectedStatus(Int, during: String, bodyPrefix: String)
    /// The upload is gone from the server (404 or 410) while it went on.
    case uploadGone(url: String)
    /// The file changed (size, modification time or identity) since the upload began:
    /// never is a mixed upload sent.
    case fileChanged(path: String, reason: String)
    /// The upload is larger than the server takes (413, or its announced `max-size`).
    case tooLarge(size: Int64, limit: Int64?)
    /// Every retry failed; `lastError` says how the last one did.
    case retriesExhausted(attempts: Int, lastError: String)

    public var description: String {
        switch self {
        case .protocolUnsupported(let status, let detail):
            return "The server does not accept this resumable-upload protocol (\(status)): \(detail)"
        case .unexpectedStatus(let status, let during, let prefix):
            return "The server answered \(status) to \(during): \(prefix)"
        case .uploadGone(let url):
            return "The upload \(url) is gone from the server."
        case .fileChanged(let path, let reason):
            return "\(path) changed since the upload began (\(reason)); start it again to send the new content."
        case .tooLarge(let size, let limit):
            return "The upload of \(size) bytes is larger than the server takes" + (limit.map { " (at most \($0) bytes)." } ?? ".")
        case .retriesExhausted(let attempts, let lastError):
            return "The upload failed after \(attempts) attempts: \(lastError)"
        }
    }
}
