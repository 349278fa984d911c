#if os(Linux)
import Foundation
import Multipart
import NIOCore
import NIOHPACK
import NIOHTTP2

/// On an HTTP/2 stream channel: sends the request's headers, then the body of a plan with
/// bytes and file parts as DATA frames of `frameSize` bytes, read on the event loop (`pread`
/// of a file the page cache holds) whenever the channel is writable, so that no task hop
/// stands between a window update and the next frame; collects the response's body.
final class EventLoopBodyPump: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// A body part the pump does not read: a stream.
    struct UnsupportedSegment: Error {}

    private let headers: HPACKHeaders
    private let segments: [BodySegment]
    private let frameSize: Int
    private let response: EventLoopPromise<(status: String, body: String)>
    private var segmentIndex = 0
    private var offset: Int64 = 0
    private var descriptor: Int32 = -1
    private var sentEnd = false
    private var status = ""
    private var body = ""

    init(headers: HPACKHeaders, plan: BodyPlan, frameSize: Int, response: EventLoopPromise<(status: String, body: String)>) {
        self.headers = headers
        self.segments = plan.segments
        self.frameSize = frameSize
        self.response = response
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if let value = frame.headers.first(name: ":status") { status = value }
            if frame.endStream { finish() }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data { body += String(buffer: buffer) }
            if frame.endStream { finish() }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        fail(error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closeFile()
        response.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    private func start(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        pump(context: context)
    }

    /// Writes frames while the channel takes them; the last carries END_STREAM.
    private func pump(context: ChannelHandlerContext) {
        while !sentEnd && context.channel.isWritable {
            guard segmentIndex < segments.count else {
                sentEnd = true
                context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))), promise: nil)
                return
            }
            var buffer = context.channel.allocator.buffer(capacity: frameSize)
            switch segments[segmentIndex] {
            case .bytes(let bytes):
                buffer.writeBytes(bytes)
                segmentIndex += 1
            case .file(let region):
                if descriptor < 0 { descriptor = open(region.path, O_RDONLY | O_CLOEXEC) }
                let want = Int(min(Int64(frameSize), region.length - offset))
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { pread(descriptor, $0.baseAddress, want, off_t(region.offset + offset)) }
                guard count > 0 else {
                    fail(BenchmarkFailure("reading \(region.path) failed or ended early"), context: context)
                    return
                }
                offset += Int64(count)
                if offset == region.length {
                    closeFile()
                    offset = 0
                    segmentIndex += 1
                }
            case .stream:
                fail(UnsupportedSegment(), context: context)
                return
            }
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer)))), promise: nil)
        }
    }

    private func finish() {
        closeFile()
        response.succeed((status, body))
    }

    private func fail(_ error: Error, context: ChannelHandlerContext) {
        closeFile()
        response.fail(error)
        context.close(promise: nil)
    }

    private func closeFile() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
#endif
