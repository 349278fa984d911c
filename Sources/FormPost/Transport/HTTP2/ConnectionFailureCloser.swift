import NIOConcurrencyHelpers
import NIOCore

/// Last on a connection of ``HTTP2UploadPath``, behind the HTTP/2 handler: keeps the first
/// error that reaches the end of the pipeline (an HTTP/2 connection error, after which
/// NIOHTTP2 has sent GOAWAY but leaves the connection open; a TLS or socket error) and closes
/// the connection, so that the upload's stream ends at once with that error instead of
/// waiting for its deadline.
final class ConnectionFailureCloser: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let connectionError: NIOLockedValueBox<(any Error)?>

    init(connectionError: NIOLockedValueBox<(any Error)?>) {
        self.connectionError = connectionError
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connectionError.withLockedValue { if $0 == nil { $0 = error } }
        context.close(promise: nil)
    }
}
