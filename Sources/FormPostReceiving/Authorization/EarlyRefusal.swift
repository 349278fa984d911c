import HTTPTypes
import NIOCore

/// The answer that refuses a request before its body is read: JSON `{"error": message}`,
/// closing the connection when a body may follow unread.
enum EarlyRefusal {
    static func response(_ message: String, status: HTTPResponse.Status, request: ReceiverRequest) -> ReceiverResponse {
        UploadReceiver.json(ErrorBody(error: message), status: status, endsExchange: request.declaresBody)
    }
}
