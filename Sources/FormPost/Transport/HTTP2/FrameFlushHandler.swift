import NIOCore

/// Between NIOSSL and the HTTP/2 handler: passes writes on, and flushes as soon as
/// `threshold` bytes were written since the last flush, so that NIOSSL encrypts and writes
/// each DATA frame as it comes rather than all that one flush carries.
///
/// Why: when a window update arrives, NIOHTTP2 sends all it held back for the stream (a
/// whole window, 64 KiB from nginx) and flushes once; NIOSSL encrypts everything a flush
/// carries before its one write. A proxy that streams the body on (nginx with
/// `proxy_request_buffering off`) reopens the window only once it has passed on what it
/// holds, so client and proxy took turns. Flushing per frame lets the first 16 KiB reach the
/// proxy while the next are encrypted, as curl does.
final class FrameFlushHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let threshold: Int
    private var unflushed = 0

    init(threshold: Int) {
        self.threshold = threshold
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        unflushed += unwrapOutboundIn(data).readableBytes
        context.write(data, promise: promise)
        if unflushed >= threshold {
            unflushed = 0
            context.flush()
        }
    }

    func flush(context: ChannelHandlerContext) {
        unflushed = 0
        context.flush()
    }
}
