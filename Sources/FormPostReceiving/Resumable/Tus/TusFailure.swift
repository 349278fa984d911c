import HTTPTypes

/// A request the tus receiver refuses, with its status.
struct TusFailure: Error {
    let status: HTTPResponse.Status
    let message: String
    /// The seconds a 503 tells the client to wait (`Retry-After`): 60 unless said.
    let retryAfter: Int

    init(_ status: HTTPResponse.Status, _ message: String, retryAfter: Int = 60) {
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }
}
