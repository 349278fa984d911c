import FormPostReceiving
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Interim (1xx) responses, written before the request's final answer on the request's
/// own channel (its connection on HTTP/1.1, its stream on HTTP/2), whose outbound end
/// takes Hummingbird's response parts. Hummingbird's responders return only the final
/// response; this is how the IETF draft's `104 Upload Resumption Supported` goes out
/// while the body is still being read.
enum InterimResponse {
    /// Writes and flushes an interim response of `status` with `fields`; a channel that is
    /// gone is no error (the request's body will tell).
    static func send(_ status: HTTPResponse.Status, fields: HTTPFields, on channel: any Channel) async {
        let head = HTTPResponse(status: status, headerFields: fields)
        try? await channel.writeAndFlush(HTTPResponsePart.head(head))
    }
}
