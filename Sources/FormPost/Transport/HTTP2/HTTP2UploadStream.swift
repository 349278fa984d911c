import HTTPTypes
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The HTTP/2 stream of one upload, on its connection behind NIOHTTP2's handler (no
/// multiplexer, no stream channel: frames of stream 1 written and read here): sends the
/// request's HEADERS, then the body as DATA frames of at most ``frameSize`` bytes, each
/// flushed as it is written, the next once the one before has been written to the socket,
/// and collects the answer, opening the flow-control windows for the answer's DATA.
///
/// The body is read on the connection's event loop when its bytes are in memory or in the page
/// cache, so no task hop stands between a window update and the next frame; bytes that must
/// come from the disk or from a stream are read off the loop, and pumping goes on once they
/// are in. It is read ``readSize`` bytes at a time, and each read sent as frames that are
/// slices of it (no copy): one file read per eight frames instead of one per frame.
/// Progress counts a read's bytes when the connection has written its last frame.
///
/// One frame in flight at a time: the pacing that lets a streaming proxy pass each frame on
/// while the next is encrypted (a frame the stream's window holds back is written once the
/// window opens, and the next follows it). With a stream channel giving the same pacing,
/// each alternative measured through nginx's streaming configuration (1 GiB, against
/// `curl -F --http2`) was slower: 80 KiB queued per stream 0.66–0.74×, 8 KiB frames
/// 0.73–0.80×, 32 KiB frames 0.75× (though 1.5–1.6× where nginx grants a 1 MiB window), and a
/// frame's header and payload in one TLS record 0.76–0.78×, against 1.04–1.24×; without the
/// stream channel, 1.16–1.39× at 0.70–0.87× curl's CPU (`Benchmarks/README.md`).
///
/// A final answer that comes before the body is all sent ends the body (RFC 9113 §8.1).
/// Every method runs on the event loop.
final class HTTP2UploadStream: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The upload's stream: the connection's first.
    static let streamID = HTTP2StreamID(1)

    /// What the server answered.
    struct Answer: Sendable {
        var status: Int
        var fields: HTTPFields
        var body: ByteBuffer
    }

    /// An exchange that failed, and whether the head of an answer had come.
    struct Failure: Error {
        let error: any Error
        let answerBegan: Bool
    }

    /// The largest DATA frame sent: HTTP/2's default `SETTINGS_MAX_FRAME_SIZE`, whatever
    /// larger size the server allows, so that a streaming proxy can pass each frame on as
    /// the next is encrypted.
    static let frameSize = 16 * 1024

    /// How much of the body one read takes: eight frames, the 128 KiB buffers the
    /// AsyncHTTPClient path sends (a stream part's bytes wait until a read is full, there too).
    static let readSize = 8 * frameSize

    private let head: HPACKHeaders
    private let body: PlanByteBuffers.IteratorState
    private let progress: ProgressReporter
    private let maxResponseBytes: Int
    private let answer: EventLoopPromise<Answer>
    private var started = false
    private var sentEnd = false
    private var finished = false
    private var status: Int?
    private var fields = HTTPFields()
    private var received = ByteBuffer()
    /// What was read of the body and is not yet written as frames, and the size of that read.
    private var unsent = ByteBuffer()
    private var readBytes = 0
    /// Whether a DATA frame is written and not yet on the socket.
    private var frameInFlight = false
    /// The bytes of a read that count as sent once the frame in flight is on the socket: its
    /// size when that frame is the read's last, else 0.
    private var unacknowledged = 0

    init(head: HPACKHeaders, body: PlanByteBuffers.IteratorState, progress: ProgressReporter, maxResponseBytes: Int, answer: EventLoopPromise<Answer>) {
        self.head = head
        self.body = body
        self.progress = progress
        self.maxResponseBytes = maxResponseBytes
        self.answer = answer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(.failure(Failure(error: ChannelError.ioOnClosedChannel, answerBegan: status != nil)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.failure(Failure(error: ChannelError.ioOnClosedChannel, answerBegan: status != nil)))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
        context.fireErrorCaught(error)
    }

    /// A stream closed before its answer ended: reset (by the server, or by NIOHTTP2 for a
    /// malformed answer: its error code), or above the last stream a GOAWAY said the server
    /// would process (CANCEL, as NIOHTTP2 closes those) — the error a stream channel ended
    /// with. A stream closed cleanly has ended its answer first.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, closed.streamID == Self.streamID, let reason = closed.reason, !finished {
            fail(NIOHTTP2Errors.streamClosed(streamID: Self.streamID, errorCode: reason), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers) where frame.streamID == Self.streamID:
            if status == nil {
                guard let value = headers.headers.first(name: ":status"), let code = Int(value), (100...999).contains(code) else {
                    return fail(NIOHTTP2Errors.missingPseudoHeader(":status"), context: context)
                }
                // An interim answer (100 Continue, 103 Early Hints): the final one follows.
                if code < 200 { return }
                status = code
                fields = HTTPFields(headers.headers)
            }
            if headers.endStream { end(.success(Answer(status: status ?? 0, fields: fields, body: received))) }
        case .data(let data) where frame.streamID == Self.streamID:
            // What it counts against the flow-control windows: its data and padding.
            let increment = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            if case .byteBuffer(var bytes) = data.data {
                guard received.readableBytes + bytes.readableBytes <= maxResponseBytes else {
                    return fail(UploadError.responseTooLarge(limit: maxResponseBytes), context: context)
                }
                received.writeBuffer(&bytes)
            }
            if data.endStream {
                end(.success(Answer(status: status ?? 0, fields: fields, body: received)))
            } else if increment > 0 {
                // What a stream channel would do: the windows reopened by what was read (sent
                // when NIOHTTP2 flushes at the end of the read).
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: Self.streamID, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            }
        default:
            break
        }
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        progress.restart()
        context.write(wrapOutboundOut(HTTP2Frame(streamID: Self.streamID, payload: .headers(.init(headers: head)))), promise: nil)
        pump(context: context)
        context.flush()
    }

    /// Writes frames while the stream takes them; the last carries END_STREAM.
    private func pump(context: ChannelHandlerContext) {
        while !sentEnd, !finished, !frameInFlight, !body.isReadingOffLoop, context.channel.isWritable {
            if unsent.readableBytes > 0 {
                writeFrame(context: context)
                continue
            }
            let buffer: ByteBuffer?
            do {
                buffer = try body.nextBufferWithoutBlocking()
            } catch {
                return fail(error, context: context)
            }
            if let buffer {
                take(buffer)
            } else if body.isFinished {
                sentEnd = true
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: Self.streamID, payload: .data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))), promise: nil)
            } else {
                return readOffLoop(context: context)
            }
        }
    }

    /// Writes the next frame of ``unsent``, END_STREAM set when it is the body's last; pumping
    /// goes on once it is on the socket. The last frame of a read counts the read's bytes as sent.
    private func writeFrame(context: ChannelHandlerContext) {
        let frame = unsent.readSlice(length: min(Self.frameSize, unsent.readableBytes))!
        let lastOfRead = unsent.readableBytes == 0
        sentEnd = lastOfRead && body.isFinished
        let written = context.eventLoop.makePromise(of: Void.self)
        frameInFlight = true
        unacknowledged = lastOfRead ? readBytes : 0
        written.futureResult.assumeIsolated().whenComplete { [self] result in
            frameInFlight = false
            switch result {
            case .success:
                if unacknowledged > 0 { progress.add(unacknowledged) }
                pump(context: context)
            case .failure(let error):
                // A write that fails without the stream closing or the connection failing
                // (else the upload has ended already) ends the upload.
                fail(error, context: context)
            }
        }
        let data = HTTP2Frame(streamID: Self.streamID, payload: .data(.init(data: .byteBuffer(frame), endStream: sentEnd)))
        context.writeAndFlush(wrapOutboundOut(data), promise: written)
    }

    /// Takes a read of the body to send.
    private func take(_ buffer: ByteBuffer) {
        unsent = buffer
        readBytes = buffer.readableBytes
    }

    private func readOffLoop(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        body.nextBufferOffLoop(then: context.eventLoop) { result in
            let (stream, context) = bound.value
            guard !stream.finished else { return }
            switch result {
            case .success(let buffer):
                if let buffer { stream.take(buffer) }
                stream.pump(context: context)
            case .failure(let error):
                stream.fail(error, context: context)
            }
        }
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        end(.failure(Failure(error: error, answerBegan: status != nil)))
        context.close(promise: nil)
    }

    private func end(_ result: Result<Answer, any Error>) {
        guard !finished else { return }
        finished = true
        // A stream part waiting for bytes that will never be sent stops being iterated.
        body.cancelOffLoopRead()
        answer.completeWith(result)
    }
}
