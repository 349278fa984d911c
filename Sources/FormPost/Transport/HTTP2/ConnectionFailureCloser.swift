import NIOConcurrencyHelpers
import NIOCore

/// Last on a connection of ``HTTP2UploadPath``, behind the upload's ``HTTP2UploadStream``
/// (which ends the upload with an error that reaches it, and passes it on): keeps the first
/// error that reaches the end of the pipeline (an HTTP/2 connection error, after which
/// NIOHTTP2 has sent GOAWAY but leaves the connection open; a TLS or socket error), which
/// names what a later "I/O on closed channel" stands for, and closes the connection.
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
