import HTTPTypes
import NIOCore

/// A request the receiver of resumable uploads refuses: its answer, and whether it says
/// the upload is complete (`Upload-Complete`), when it says.
struct DraftFailure: Error {
    let response: ReceiverResponse
    let complete: Bool?

    init(_ status: HTTPResponse.Status, _ message: String, complete: Bool? = nil) {
        self.response = UploadReceiver.json(ErrorBody(error: message), status: status)
        self.complete = complete
    }

    init(response: ReceiverResponse, complete: Bool?) {
        self.response = response
        self.complete = complete
    }
}
