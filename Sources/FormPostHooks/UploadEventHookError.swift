import FormPostReceiving

/// Why ``UploadEventHook`` did not deliver an event (it is delivered again later). The URL
/// each case carries is the hook's without credentials, query or fragment.
public enum UploadEventHookError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The service answered with a status other than 2xx.
    case refused(url: String, status: Int)
    /// No complete answer came in time, or no connection could be made.
    case noAnswer(url: String, cause: String)

    /// What went wrong, in a sentence; the URL without credentials, query or fragment
    /// even when the case was made with them.
    public var description: String {
        switch self {
        case .refused(let url, let status): "the hook at \(HookURL.redacted(url)) answered \(status)"
        case .noAnswer(let url, let cause): "the hook at \(HookURL.redacted(url)) gave no answer: \(cause)"
        }
    }
}
