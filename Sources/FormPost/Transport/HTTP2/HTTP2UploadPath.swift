import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// FormPost's own path for large uploads over HTTPS and HTTP/2: a connection per upload
/// (NIOSSL with the transport's TLS configuration, ALPN `h2` then `http/1.1`, SwiftNIO's
/// HTTP/2 handler), whose body goes out in 16 KiB DATA frames, each flushed to NIOSSL as it
/// is written (``FrameFlushHandler``, ``HTTP2UploadStream``).
///
/// Why not AsyncHTTPClient: it sends what a window update lets through as one frame in one
/// flush, which NIOSSL encrypts whole before writing; through a proxy that streams the body
/// on (nginx's `proxy_request_buffering off`) and reopens the window only once it has passed
/// on what it holds, client and proxy took turns — 0.62× `curl --http2` for 1 GiB.
///
/// Taken only where it changes nothing else: a transport that made its own client (its
/// configuration known), no proxy, HTTP/2 allowed, NIOPosix's sockets (Network.framework
/// keeps AsyncHTTPClient), none of the configuration's connection settings this path does
/// not carry out (DNS overrides or resolver, a local address, Multipath TCP, a read timeout,
/// debug initializers), a body of at least ``minimumLength`` bytes or of unknown length,
/// no rate cap. The connect timeout bounds the TCP connection and the TLS handshake, as
/// AsyncHTTPClient's does. A server that chooses HTTP/1.1 is remembered, and its uploads go through
/// AsyncHTTPClient from then on.
///
/// One upload per origin at a time: while one is under way here, others to the same origin
/// go through AsyncHTTPClient, whose one HTTP/2 connection carries them as streams side by
/// side. Sixteen uploads of 64 MiB at once through nginx ran at 0.97–1.10× `curl --parallel`
/// each on a connection of its own, against 1.38–1.62× multiplexed.
final class HTTP2UploadPath: Sendable {
    /// The smallest body with a known length sent on a connection of its own: below it, the
    /// TLS handshake a new connection costs is not paid back.
    static let minimumLength: Int64 = 4 << 20

    private let group: any EventLoopGroup
    private let tlsConfiguration: TLSConfiguration
    private let connectTimeout: TimeAmount
    private let context = Mutex<NIOSSLContext?>(nil)
    private let origins = Mutex(Origins())

    /// What the path knows of origins.
    private struct Origins {
        /// Origins whose server chose HTTP/1.1.
        var http1: Set<Origin> = []
        /// Origins an upload on this path is under way to.
        var busy: Set<Origin> = []
    }

    /// The path for a client made with `configuration` on `group`, or nil where it is not taken.
    init?(configuration: HTTPClient.Configuration, group: any EventLoopGroup) {
        guard configuration.proxy == nil, configuration.httpVersion != .http1Only, NetworkStack(group) == .sockets,
              configuration.dnsOverride.isEmpty, configuration.dnsResolver == .system, configuration.localAddress == nil,
              !configuration.enableMultipath, configuration.timeout.read == nil,
              configuration.http1_1ConnectionDebugInitializer == nil, configuration.http2ConnectionDebugInitializer == nil,
              configuration.http2StreamChannelDebugInitializer == nil else { return nil }
        self.group = group
        var tls = configuration.tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2", "http/1.1"]
        tlsConfiguration = tls
        connectTimeout = configuration.timeout.connect ?? .seconds(10)
    }

    /// Records that `origin` answered over HTTP/1.1: it is not asked for HTTP/2 again.
    func answeredOverHTTP1(_ origin: Origin) {
        _ = origins.withLock { $0.http1.insert(origin) }
    }

    /// Sends `request` on a new connection when it goes this way and no other upload to
    /// `origin` does; nil when it does not, or when the server chose HTTP/1.1 (nothing was
    /// sent): send it another way. Errors are AsyncHTTPClient's transport's.
    func send(_ request: TransportRequest, origin: Origin, deadline: NIODeadline) async throws -> UploadResponse? {
        guard origin.scheme == "https", request.maxBytesPerSecond == nil, let body = request.body else { return nil }
        if let length = body.contentLength, length < Self.minimumLength { return nil }
        let claimed = origins.withLock { origins in
            guard !origins.http1.contains(origin), !origins.busy.contains(origin) else { return false }
            origins.busy.insert(origin)
            return true
        }
        guard claimed else { return nil }
        defer { _ = origins.withLock { $0.busy.remove(origin) } }
        return try await sendOnItsOwnConnection(request, body: body, origin: origin, deadline: deadline)
    }

    private func sendOnItsOwnConnection(_ request: TransportRequest, body: RequestBody, origin: Origin, deadline: NIODeadline) async throws -> UploadResponse? {
        let loop = group.next()
        let negotiated = loop.makePromise(of: Bool.self)
        let answer = loop.makePromise(of: HTTP2UploadStream.Answer.self)
        let connectionError = NIOLockedValueBox<(any Error)?>(nil)
        let timedOut = Atomic<Bool>(false), handshakeTimedOut = NIOLockedValueBox(false)
        let channel: any Channel
        let connectDeadline = min(deadline, .now() + connectTimeout)
        do {
            channel = try await connect(request, body: body, origin: origin, loop: loop, deadline: connectDeadline,
                                        negotiated: negotiated, answer: answer, connectionError: connectionError, handshakeTimedOut: handshakeTimedOut)
        } catch {
            negotiated.fail(error)
            answer.fail(error)
            if Task.isCancelled { throw CancellationError() }
            // The handshake's timer closed the connection before it was handed over: what
            // the connect then fails with ("I/O on closed channel") is the timeout's doing.
            if handshakeTimedOut.withLockedValue({ $0 }) { throw UploadError.timedOut("connecting to \(origin.host) took too long") }
            throw AsyncHTTPClientTransport.translate(error, url: request.url)
        }
        let deadlineClose = loop.scheduleTask(deadline: deadline) {
            timedOut.store(true, ordering: .relaxed)
            channel.close(promise: nil)
        }
        defer {
            deadlineClose.cancel()
            channel.close(promise: nil)
        }
        var spokeHTTP2 = false
        do {
            return try await withTaskCancellationHandler {
                guard try await negotiated.futureResult.get() else {
                    answer.fail(ChannelError.ioOnClosedChannel)
                    answeredOverHTTP1(origin)
                    return nil
                }
                spokeHTTP2 = true
                let received = try await answer.futureResult.get()
                return UploadResponse(status: received.status, headers: received.fields, body: Array(received.body.readableBytesView),
                                      url: request.url, method: request.method, httpVersion: "2")
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            answer.fail(error)
            if Task.isCancelled { throw CancellationError() }
            if timedOut.load(ordering: .relaxed) { throw UploadError.timedOut("no complete answer from \(origin.host) in time") }
            if !spokeHTTP2, handshakeTimedOut.withLockedValue({ $0 }) { throw UploadError.timedOut("connecting to \(origin.host) took too long") }
            let failure = error as? HTTP2UploadStream.Failure
            var cause = failure?.error ?? error
            if let closed = cause as? ChannelError, closed == .ioOnClosedChannel, let first = connectionError.withLockedValue({ $0 }) { cause = first }
            // A connection that fails once it was made is not one that could not be made
            // (which a retry policy may send again): the server may have taken the request.
            if spokeHTTP2, let failed = cause as? IOError {
                cause = UploadError.transport("the connection to \(origin.host) failed while the upload was under way: \(String(cString: strerror(failed.errnoCode)))")
            }
            throw AsyncHTTPClientTransport.failure(cause, of: request, beforeAnswer: !(failure?.answerBegan ?? false), mayReuse: false)
        }
    }

    /// A TCP connection to `origin` with NIOSSL and ``HTTP2Negotiation`` on it, which opens
    /// the upload's stream once the server chose HTTP/2. The connection is closed (and
    /// `handshakeTimedOut` set) when the TLS handshake has not ended by `deadline`.
    private func connect(_ request: TransportRequest, body: RequestBody, origin: Origin, loop: any EventLoop, deadline: NIODeadline,
                         negotiated: EventLoopPromise<Bool>, answer: EventLoopPromise<HTTP2UploadStream.Answer>,
                         connectionError: NIOLockedValueBox<(any Error)?>, handshakeTimedOut: NIOLockedValueBox<Bool>) async throws -> any Channel {
        let context = try sslContext()
        let head = HTTP2RequestHead.headers(of: request, body: body, origin: origin)
        let stream = PlanByteBuffers.IteratorState.Unchecked(state: PlanByteBuffers.IteratorState(
            reader: body.plan.makeChunkReader(chunkSize: HTTP2UploadStream.readSize), chunkSize: HTTP2UploadStream.readSize))
        let progress = request.progress, maxResponseBytes = request.maxResponseBytes
        // SNI names a host, never an address (RFC 6066 §3); NIOSSL then checks the address.
        let serverName = (try? SocketAddress(ipAddress: origin.host, port: 0)) == nil ? origin.host : nil
        let timeout = min(connectTimeout, deadline - .now())
        return try await ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                // The TLS handshake within what is left of the connect timeout, as AsyncHTTPClient
                // does. The timer is set here, on the connection's loop before its handshake can
                // end, so that the end always cancels it: set once the connection was returned,
                // by a task that a busy cooperative pool ran late, a deadline already past closed
                // connections whose upload had begun ("I/O on closed channel").
                let handshakeClose = channel.eventLoop.scheduleTask(deadline: deadline) {
                    handshakeTimedOut.withLockedValue { $0 = true }
                    channel.close(promise: nil)
                }
                negotiated.futureResult.whenComplete { _ in handshakeClose.cancel() }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName))
                    try pipeline.addHandler(HTTP2Negotiation(negotiated: negotiated) { channel in
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(FrameFlushHandler(threshold: HTTP2UploadStream.frameSize))
                        // No server push: nothing here would read a pushed stream.
                        try pipeline.addHandler(NIOHTTP2Handler(mode: .client, initialSettings: nioDefaultSettings + [HTTP2Setting(parameter: .enablePush, value: 0)]))
                        // The closer first: the upload's handler starts writing as it is added.
                        let closer = ConnectionFailureCloser(connectionError: connectionError)
                        try pipeline.addHandler(closer)
                        try pipeline.addHandler(HTTP2UploadStream(head: head, body: stream.state, progress: progress, maxResponseBytes: maxResponseBytes, answer: answer),
                                                position: .before(closer))
                    })
                }
            }
            .connect(host: origin.host, port: origin.port ?? 443)
            .get()
    }

    /// The TLS context, made on first use and kept: loading trust roots costs milliseconds.
    private func sslContext() throws -> NIOSSLContext {
        try context.withLock { context in
            if let context { return context }
            let made = try NIOSSLContext(configuration: tlsConfiguration)
            context = made
            return made
        }
    }
}
