#if os(Linux)
import Crypto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 server over TLS on 127.0.0.1, made of SwiftNIO's HTTP/2 stack, that does to
/// each request what ``action`` says for it (by its order of arrival): answer with the body's
/// digest, reset the stream after some bytes, end the connection with GOAWAY, answer before
/// the body, or never answer. It grants `window` bytes of flow control per stream and allows
/// DATA frames of `maxFrameSize`, and records each request (``requests``) and the connections
/// accepted. A window below HTTP/2's initial 65,535 bytes is granted once those are used: its
/// SETTINGS keep the initial window (NIOHTTP2 stops granting a stream whose window a smaller
/// SETTINGS_INITIAL_WINDOW_SIZE made negative — curl stalls on it as FormPost did).
final class HTTP2TestServer: Sendable {
    /// What the server does to a request.
    enum Action: Sendable {
        /// Reads the whole body and answers 200 with its length, SHA-256 and largest DATA frame as JSON.
        case answer
        /// As ``answer``, the JSON with a `padding` field of `bytes` characters: an answer
        /// larger than HTTP/2's initial flow-control windows.
        case answerPadded(bytes: Int)
        /// Resets the stream with `code` once `afterBytes` of the body arrived.
        case reset(afterBytes: Int, code: HTTP2ErrorCode)
        /// On the request's HEADERS: GOAWAY naming no stream as processed, then closes.
        case goAway
        /// On the request's HEADERS: answers `status` at once, ending the stream.
        case answerAtOnce(status: Int)
        /// Reads the body and never answers.
        case hold

        /// The padding of the answer to a whole body, or nil for an action that gives none.
        var padding: Int? {
            switch self {
            case .answer: 0
            case .answerPadded(let bytes): bytes
            default: nil
            }
        }
    }

    /// What arrived of one request.
    struct Request: Sendable {
        var headers: [String: String] = [:]
        var bytes = 0
        var largestFrame = 0
        var frames = 0
        var ended = false
    }

    let port: Int
    private let channel: any Channel
    private let state = Record()

    /// What arrived, shared with the connections' handlers.
    private final class Record: Sendable {
        let state = Mutex<(connections: Int, closed: Int, requests: [Request])>((0, 0, []))

        func withLock<T>(_ body: (inout (connections: Int, closed: Int, requests: [Request])) -> T) -> T {
            state.withLock { body(&$0) }
        }
    }

    /// The requests in order of arrival.
    var requests: [Request] { state.withLock { $0.requests } }
    /// How many connections were accepted.
    var connections: Int { state.withLock { $0.connections } }
    /// How many connections have closed.
    var closedConnections: Int { state.withLock { $0.closed } }

    init(fixtures: TLSFixtures, window: Int = 65_535, maxFrameSize: Int = 16_384, action: @escaping @Sendable (Int) -> Action) throws {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(fixtures.certificatePath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: fixtures.keyPath, format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let state = self.state
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                                      HTTP2Setting(parameter: .initialWindowSize, value: max(window, 65_535)),
                                      HTTP2Setting(parameter: .maxFrameSize, value: maxFrameSize)]
        connection.targetWindowSize = max(window, 65_535)
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.targetWindowSize = window
        channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [connection, stream] channel in
                state.withLock { $0.connections += 1 }
                channel.closeFuture.whenComplete { _ in state.withLock { $0.closed += 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: stream) { streamChannel in
                        let index = state.withLock { state in
                            state.requests.append(Request())
                            return state.requests.count - 1
                        }
                        return streamChannel.eventLoop.makeCompletedFuture {
                            try streamChannel.pipeline.syncOperations.addHandler(StreamHandler(index: index, action: action(index), state: state))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    /// Stops listening; connections still open are closed by their peers.
    func stop() {
        try? channel.close().wait()
    }

    /// One request's stream: records what arrives and does the request's action.
    private final class StreamHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        private let index: Int
        private let action: Action
        private let state: Record
        private var hasher = SHA256()
        private var done = false

        init(index: Int, action: Action, state: Record) {
            self.index = index
            self.action = action
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !done else { return }
            switch unwrapInboundIn(data) {
            case .headers(let frame):
                var fields: [String: String] = [:]
                for (name, value, _) in frame.headers { fields[name] = value }
                state.withLock { $0.requests[index].headers = fields }
                switch action {
                case .goAway:
                    done = true
                    let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
                    let parent = context.channel.parent
                    parent?.writeAndFlush(goAway).whenComplete { _ in parent?.close(promise: nil) }
                case .answerAtOnce(let status):
                    done = true
                    context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: HPACKHeaders([(":status", String(status))]), endStream: true))), promise: nil)
                default:
                    break
                }
            case .data(let frame):
                guard case .byteBuffer(let buffer) = frame.data else { return }
                buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                let bytes = state.withLock { state in
                    state.requests[index].bytes += buffer.readableBytes
                    state.requests[index].largestFrame = max(state.requests[index].largestFrame, buffer.readableBytes)
                    state.requests[index].frames += 1
                    state.requests[index].ended = frame.endStream
                    return state.requests[index].bytes
                }
                if case .reset(let afterBytes, let code) = action, bytes >= afterBytes {
                    done = true
                    context.writeAndFlush(wrapOutboundOut(.rstStream(code)), promise: nil)
                } else if frame.endStream, let padding = action.padding {
                    done = true
                    let (largest, frames) = state.withLock { ($0.requests[index].largestFrame, $0.requests[index].frames) }
                    let digest = hexString(hasher.finalize())
                    let json = #"{"length":\#(bytes),"sha256":"\#(digest)","largestFrame":\#(largest),"frames":\#(frames),"padding":"\#(String(repeating: "p", count: padding))"}"#
                    context.write(wrapOutboundOut(.headers(.init(headers: HPACKHeaders([(":status", "200"), ("content-type", "application/json")])))), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer(string: json)), endStream: true))), promise: nil)
                }
            default:
                break
            }
        }
    }
}
#endif
