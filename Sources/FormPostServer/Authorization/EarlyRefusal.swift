import HTTPTypes
import Hummingbird
import NIOCore

/// The answer that refuses a request before its body is read: JSON `{"error": message}`,
/// closing the connection when a body may follow unread.
enum EarlyRefusal {
    static func response(_ message: String, status: HTTPResponse.Status, request: Request, channel: (any Channel)?) -> Response {
        let unread = channel.map { UploadReceiver.declaresBody(request, on: $0) } == true
        return UploadReceiver.json(ErrorBody(error: message), status: status, ending: unread ? channel : nil)
    }
}
