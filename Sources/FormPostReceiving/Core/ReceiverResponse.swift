import HTTPTypes
import NIOCore

/// A receiver's answer to an ``ReceiverRequest``, for the server adapter to send: a status,
/// header fields and a whole (small) body — JSON, the upload page.
public struct ReceiverResponse: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields; `Content-Length` is the adapter's to set.
    public var headers: HTTPFields
    /// The body; empty for none.
    public var body: ByteBuffer
    /// Whether the answer ends the exchange although the client may still be sending (a
    /// body the receiver did not read to its end): the adapter closes the connection (on
    /// HTTP/2, the stream) ``lingeringTime`` after the answer was written, or lets the
    /// client close it first. It does not say `Connection: close`: AsyncHTTPClient closes at
    /// once on that while its body is still going, and loses the answer's body; HTTP/2
    /// forbids it.
    public var endsExchange: Bool

    /// How long a connection whose request was answered before its body was read goes on
    /// being read (and what arrives dropped) before it is closed: time for the client to
    /// read the answer and stop sending. Closing at once would make the kernel answer the
    /// bytes still in flight with a reset, which can destroy the answer before the client
    /// reads it (nginx's `lingering_timeout` is 5 s too).
    public static let lingeringTime: Duration = .seconds(5)

    /// The same answer to `HEAD`: its status and header fields, with the `Content-Length`
    /// of its body, and no body.
    public func forHead() -> ReceiverResponse {
        var head = self
        head.headers[.contentLength] = String(body.readableBytes)
        head.body = ByteBuffer()
        return head
    }

    /// An answer of `status` with `headers` and `body`.
    public init(status: HTTPResponse.Status, headers: HTTPFields = [:], body: ByteBuffer = ByteBuffer(), endsExchange: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.endsExchange = endsExchange
    }
}
