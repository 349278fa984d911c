import NIOCore
import NIOTLS

/// Behind NIOSSL on a connection of ``HTTP2UploadPath``: when the TLS handshake ends, tells
/// whether the server chose HTTP/2 by ALPN and, if it did, runs `speakHTTP2` right away, in
/// the same event, so that the HTTP/2 handler reads the first bytes the server sends after
/// the handshake. Fails `negotiated` with what ended the connection before (later errors
/// reach ``HTTP2UploadStream`` and ``ConnectionFailureCloser``, at the end of the pipeline).
final class HTTP2Negotiation: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let negotiated: EventLoopPromise<Bool>
    private let speakHTTP2: (any Channel) throws -> Void

    init(negotiated: EventLoopPromise<Bool>, speakHTTP2: @escaping (any Channel) throws -> Void) {
        self.negotiated = negotiated
        self.speakHTTP2 = speakHTTP2
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let chosen)? = event as? TLSUserEvent {
            if chosen == "h2" {
                do {
                    try speakHTTP2(context.channel)
                    negotiated.succeed(true)
                } catch {
                    negotiated.fail(error)
                    context.close(promise: nil)
                }
            } else {
                negotiated.succeed(false)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        negotiated.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        negotiated.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}
