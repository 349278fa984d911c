import HTTPTypes

/// A request the tus receiver refuses, with its status.
struct TusFailure: Error {
    let status: HTTPResponse.Status
    let message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }
}
