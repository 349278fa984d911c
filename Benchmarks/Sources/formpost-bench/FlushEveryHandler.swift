#if os(Linux)
import NIOCore

/// Between NIOSSL and the HTTP/2 handler: passes writes on and flushes as soon as
/// `threshold` bytes were written since the last flush, so that NIOSSL encrypts and writes
/// each DATA frame as it comes instead of everything one flush carries (a window's worth,
/// when the HTTP/2 handler sends what it held back for a window update).
final class FlushEveryHandler: ChannelOutboundHandler, RemovableChannelHandler {
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
#endif
