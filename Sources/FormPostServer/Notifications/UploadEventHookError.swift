/// Why ``UploadEventHook`` did not deliver an event (it is delivered again later).
public enum UploadEventHookError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The service answered with a status other than 2xx.
    case refused(url: String, status: Int)
    /// No answer came in time, or no connection could be made.
    case noAnswer(url: String, cause: String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .refused(let url, let status): "the hook at \(url) answered \(status)"
        case .noAnswer(let url, let cause): "the hook at \(url) gave no answer: \(cause)"
        }
    }
}
