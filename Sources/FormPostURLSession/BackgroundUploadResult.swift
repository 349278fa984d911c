import FormPost
import Foundation

/// How an upload on a background session ended when no caller was waiting for it: it
/// finished while the app was suspended or not running, and the app was relaunched, or the
/// task was started by an earlier run of the app.
///
/// ``URLSessionTransport/finishedUploads`` delivers these. A request tells which upload it
/// was by what it was sent with: its URL, its method and its header fields (a field of
/// your own, such as an idempotency key, names an upload across launches).
public struct BackgroundUploadResult: Sendable {
    /// The URL the request was sent to (before any redirect).
    public let url: URL
    /// The request's method.
    public let method: RequestMethod
    /// The request's header fields as its task was made (without the session's
    /// `httpAdditionalHeaders`).
    public let requestHeaders: HTTPFields
    /// The answer, whatever its status (`UploadResponse.validate(statuses:contentTypes:)`
    /// checks it), or the error the task ended with.
    public let outcome: Result<UploadResponse, any Error>

    /// Creates a result.
    public init(url: URL, method: RequestMethod, requestHeaders: HTTPFields, outcome: Result<UploadResponse, any Error>) {
        self.url = url
        self.method = method
        self.requestHeaders = requestHeaders
        self.outcome = outcome
    }
}
