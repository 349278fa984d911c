import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// The default transport: AsyncHTTPClient (SwiftNIO; HTTP/1.1 and HTTP/2; TLS). Bodies
/// stream from the plan with a known `Content-Length`, or chunked when a stream part has
/// no length; a small body in memory (a form encoded in memory) goes as one buffer. On
/// plaintext HTTP/1.1 without a rate cap, on NIOPosix's event loops, a transport with its
/// own client sends file parts to the socket by `sendfile` (no copy through user space);
/// otherwise — TLS, HTTP/2, a rate cap, Network.framework, an `HTTPClient` passed in —
/// everything is read into recycled buffers.
/// Redirects are left to ``FormPostClient`` (so bodies can be re-sent).
///
/// On Apple platforms the transports FormPost makes run on Network.framework
/// (AsyncHTTPClient's `HTTPClient.defaultEventLoopGroup`, as Apple recommends for cellular,
/// VPN and Wi-Fi Assist), unless their TLS configuration has a client certificate or
/// another feature only NIOSSL has: those run on NIOPosix's `MultiThreadedEventLoopGroup`.
/// Whatever the group — also an `HTTPClient` passed in — the body is written the way the
/// group it runs on accepts, and Network.framework's errors become the same
/// ``UploadError``s as NIOPosix's.
public final class AsyncHTTPClientTransport: UploadTransport {
    private let client: HTTPClient
    /// The client when FormPost made it (redirects off, so it knows which connection each
    /// body goes on); nil for an `HTTPClient` passed in.
    private let ownClient: NetworkStack.OwnClient?
    private let ownsClient: Bool
    /// Why this transport cannot send, found when it was made; thrown by every ``send(_:)``.
    private let configurationProblem: UploadError?
    /// How long the pool keeps an idle connection.
    private let idleTimeout: Duration
    /// When an exchange with each origin last got an answer: a request within `idleTimeout`
    /// of it may go out on a pooled connection, which the server may have closed meanwhile.
    private let lastAnswered = Mutex<[Origin: ContinuousClock.Instant]>([:])
    /// Which loop each request's delegate and body run on.
    private let requestLoops: RequestLoops
    /// Holds requests past what the pool serves at once to an origin.
    private let slots: ConnectionSlots
    /// FormPost's own HTTP/2 connections for large bodies over HTTPS, where the client's
    /// configuration allows them (``HTTP2UploadPath``); nil for a client passed in.
    private let http2Path: HTTP2UploadPath?

    /// A process-wide transport with a 10 s connect timeout; ``shutdown()`` leaves it running.
    public static let shared = AsyncHTTPClientTransport(configuration: defaultConfiguration(connectTimeout: .seconds(10)), eventLoopGroup: nil, owned: false)

    /// Creates a transport with its own `HTTPClient` (default TLS and HTTP version policy);
    /// call ``shutdown()`` when done.
    public convenience init(connectTimeout: Duration = .seconds(10)) {
        self.init(configuration: Self.defaultConfiguration(connectTimeout: connectTimeout))
    }

    /// Creates a transport with its own `HTTPClient` built from `configuration`: TLS (trust
    /// roots, client certificate and key, minimum version) in `tlsConfiguration`, the HTTP
    /// version policy in `httpVersion` (`.automatic` negotiates HTTP/2 by ALPN, `.http1Only`
    /// does not), `proxy`, timeouts and the connection pool. Redirects are turned off and
    /// responses are not decompressed: ``FormPostClient`` follows redirects itself, so that
    /// bodies are re-sent from the plan. Call ``shutdown()`` when done.
    ///
    ///     var configuration = HTTPClient.Configuration()
    ///     var tls = TLSConfiguration.makeClientConfiguration()
    ///     tls.trustRoots = .file("/etc/ssl/my-ca.pem")
    ///     configuration.tlsConfiguration = tls
    ///     configuration.httpVersion = .http1Only
    ///     let transport = AsyncHTTPClientTransport(configuration: configuration)
    ///
    /// `eventLoopGroup` nil lets FormPost choose: Network.framework on Apple platforms unless
    /// the TLS configuration needs NIOSSL (a client certificate or key, a key log callback,
    /// `.noHostnameVerification`), NIOPosix's singleton otherwise. A Network.framework group
    /// given with such a TLS configuration makes every ``send(_:)`` throw
    /// ``UploadError/unsupportedConfiguration(_:)`` (AsyncHTTPClient would stop the process).
    public convenience init(configuration: HTTPClient.Configuration, eventLoopGroup: (any EventLoopGroup)? = nil) {
        self.init(configuration: configuration, eventLoopGroup: eventLoopGroup, owned: true)
    }

    /// Uses `client`, an `HTTPClient` the application already has, with its event loop
    /// group, TLS configuration, proxy and pool. The transport never shuts it down.
    ///
    /// ``FormPostClient`` follows redirects itself (re-sending bodies from the plan, dropping
    /// credentials across origins); a client configured to follow them answers them before
    /// FormPost sees them, so give one with `redirectConfiguration = .disallow`.
    ///
    /// Bodies go as buffers read from the plan (128 KiB, recycled), never by `sendfile`: a
    /// client that follows redirects (AsyncHTTPClient's default) sends the same body again on
    /// a connection to the new location, which may be TLS (http to https), where a
    /// `FileRegion` would stop the process; the client's configuration cannot be read to
    /// rule that out. For `sendfile` on plaintext HTTP, let FormPost make the client
    /// (``init(configuration:eventLoopGroup:)``). Its TLS configuration is the application's:
    /// on Network.framework AsyncHTTPClient refuses (stops the process on) a client
    /// certificate, and ignores `additionalTrustRoots`.
    ///
    /// Its configuration cannot be read: give its pool's
    /// `concurrentHTTP1ConnectionsPerHostSoftLimit` as `connectionsPerHost` when it is not
    /// AsyncHTTPClient's default of 8. The transport sends at most that many requests to an
    /// HTTP/1.1 origin at once and holds the others until one is over (AsyncHTTPClient would
    /// fail a request that waited in its pool longer than the connect timeout).
    public init(client: HTTPClient, connectionsPerHost: Int = 8) {
        self.client = client
        ownClient = nil
        ownsClient = false
        requestLoops = RequestLoops(group: client.eventLoopGroup)
        slots = ConnectionSlots(http1Connections: connectionsPerHost)
        configurationProblem = nil
        http2Path = nil
        // AsyncHTTPClient's default; a client's own configuration cannot be read.
        idleTimeout = .seconds(60)
    }

    private init(configuration: HTTPClient.Configuration, eventLoopGroup: (any EventLoopGroup)?, owned: Bool) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        let group = eventLoopGroup ?? NetworkStack.preferredGroup(for: configuration)
        // With a configuration problem the client is made without TLS, and the transport
        // refuses every request.
        let (ownClient, configurationProblem) = NetworkStack.makeClient(configuration: configuration, group: group)
        self.ownClient = ownClient
        self.configurationProblem = configurationProblem
        client = ownClient.client
        http2Path = configurationProblem == nil ? HTTP2UploadPath(configuration: configuration, group: group) : nil
        ownsClient = owned
        requestLoops = RequestLoops(group: group)
        slots = ConnectionSlots(http1Connections: configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit)
        idleTimeout = .nanoseconds(configuration.connectionPool.idleTimeout.nanoseconds)
    }

    /// AsyncHTTPClient's defaults with a connect timeout of `connectTimeout`.
    ///
    /// Network.framework's wait for connectivity stays on (AsyncHTTPClient's default, as Apple
    /// recommends): on Apple platforms a connection made while the network is down or
    /// changing waits for it within the connect timeout instead of failing at once.
    private static func defaultConfiguration(connectTimeout: Duration) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(connectTimeout))
        // Failed connections are retried by the client's RetryPolicy, as the caller chose.
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// Shuts down the client this transport created; a client passed in, and ``shared``, stay up.
    public func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    public func send(_ request: TransportRequest) async throws -> UploadResponse {
        try Task.checkCancellation()
        if let configurationProblem { throw configurationProblem }
        let origin = Origin(request.url)
        guard origin.scheme == "http" || origin.scheme == "https", !origin.host.isEmpty else {
            throw UploadError.invalidURL(request.url.absoluteString)
        }
        try await slots.take(origin)
        var answeredOverHTTP2: Bool?
        defer { slots.give(origin, answeredOverHTTP2: answeredOverHTTP2) }
        let deadline: NIODeadline = request.timeout.map { .now() + TimeAmount($0) } ?? .distantFuture
        let started = ContinuousClock.now
        // A pooled connection is one an earlier exchange with the origin left idle, no longer
        // ago than the pool keeps one: only then may a close before any answer be the
        // keep-alive race rather than a server that failed while it handled the request.
        let mayReuse = lastAnswered.withLock { $0[origin].map { started - $0 < idleTimeout } ?? false }
        if let response = try await http2Path?.send(request, origin: origin, deadline: deadline) {
            answeredOverHTTP2 = true
            return response
        }
        let (response, version) = try await exchange(request, origin: origin, deadline: deadline, mayReuse: mayReuse)
        answeredOverHTTP2 = version.map { $0.major >= 2 }
        if version?.major == 1, origin.scheme == "https" { http2Path?.answeredOverHTTP1(origin) }
        lastAnswered.withLock { $0[origin] = .now }
        return response
    }

    /// One exchange: the response and the HTTP version it came in; a failure before any
    /// answer that allows sending the request again (on a possibly reused connection,
    /// `mayReuse`) is thrown as ``ConnectionClosedBeforeAnswer``.
    ///
    /// A body of at most 128 KiB in memory goes as one buffer through AsyncHTTPClient's own
    /// `execute` (its progress counted when the answer begins), unless the exchange is a
    /// resumable one; so does a body with a rate cap, streamed; any other goes through the
    /// delegate API, whose progress counts what the connection wrote.
    private func exchange(_ request: TransportRequest, origin: Origin, deadline: NIODeadline, mayReuse: Bool) async throws -> (UploadResponse, HTTPVersion?) {
        // Not for a resumable exchange (which does not ask for resends): its stall watch must
        // learn that the body is all written before the answer begins.
        let oneBuffer = request.maxBytesPerSecond == nil && request.marksClosedBeforeAnswer
            ? request.body.flatMap { Self.bytesInOneWrite($0.plan) } : nil
        if let body = request.body, request.maxBytesPerSecond == nil, oneBuffer == nil {
            return try await sendThroughDelegate(request, body: body, origin: origin, deadline: deadline, mayReuse: mayReuse)
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue)
        outgoing.headers.add(contentsOf: HTTPHeaders(request.headers))
        if let body = request.body {
            outgoing.headers.replaceOrAdd(name: "Content-Type", value: body.contentType)
            if let oneBuffer {
                outgoing.body = .bytes(oneBuffer)
            } else {
                let buffers = PlanByteBuffers(plan: body.plan, progress: request.progress, maxBytesPerSecond: request.maxBytesPerSecond)
                outgoing.body = .stream(buffers, length: body.contentLength.map { .known($0) } ?? .unknown)
            }
        }
        var answered = false
        do {
            let response = try await client.execute(outgoing, deadline: deadline)
            answered = true
            if let oneBuffer {
                // Sent in one write, before the answer began.
                request.progress.restart()
                request.progress.add(oneBuffer.readableBytes)
            }
            let collected = try await response.body.collect(upTo: request.maxResponseBytes)
            let uploadResponse = UploadResponse(
                status: Int(response.status.code),
                headers: HTTPFields(response.headers),
                body: Array(collected.readableBytesView),
                url: request.url,
                method: request.method,
                httpVersion: Self.curlName(response.version)
            )
            return (uploadResponse, response.version)
        } catch {
            throw Self.failure(error, of: request, beforeAnswer: !answered, mayReuse: mayReuse)
        }
    }

    /// A body without a rate cap: the delegate API, whose writes say when the connection
    /// took them (so the body never runs ahead of it), and where files go as `FileRegion`s
    /// (sendfile) on plaintext HTTP/1.1 over NIOPosix's sockets through FormPost's own client
    /// — never on Network.framework, whose channel takes `ByteBuffer`s only, nor through a
    /// caller's client, which may send the body again to another origin after a redirect.
    ///
    /// The request names the loop its delegate and body run on (``RequestLoops``), not its
    /// connection's: the pool then leases any idle connection (preferring one on that loop)
    /// and keeps it for the next request, as for AsyncHTTPClient's own `execute`. A request
    /// bound to a loop would get a connection of its own on it, closed as soon as it is idle.
    private func sendThroughDelegate(_ request: TransportRequest, body: RequestBody, origin: Origin, deadline: NIODeadline,
                                     mayReuse: Bool) async throws -> (UploadResponse, HTTPVersion?) {
        let eventLoop = requestLoops.loop(for: origin)
        defer { requestLoops.finished(origin) }
        let regions = FileRegionBody(plan: body.plan, eventLoop: eventLoop, connectionLoops: client.eventLoopGroup,
                                     fileRegionsOn: ownClient?.plaintextSocketConnection(to: origin))
        var headers = HTTPHeaders(request.headers)
        headers.replaceOrAdd(name: "Content-Type", value: body.contentType)
        let delegate = ResponseCollector(progress: request.progress, maxBytes: request.maxResponseBytes, onPartSent: { regions.partSent() },
                                         onError: { regions.exchangeFailed($0) }) { regions.endEarly() }
        var collected: ResponseCollector.Collected
        do {
            let outgoing = try HTTPClient.Request(url: request.url.absoluteString, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue), headers: headers, body: regions.requestBody)
            let task = client.execute(request: outgoing, delegate: delegate, eventLoop: .delegate(on: eventLoop), deadline: deadline)
            let watch = regions.usesFileRegions ? regions.watchFiles { task.cancel() } : nil
            defer { watch?.cancel() }
            collected = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            try? await regions.finish(checkingFiles: false)
            if let change = regions.fileChange { throw change }
            // A final answer (3xx–5xx) that came before the body was all sent ends the body
            // stream early; AsyncHTTPClient then reports the stream as cancelled, or the
            // server's close of the connection as an error, although the answer is complete.
            if let answer = delegate.completeFinalAnswer {
                collected = answer
            } else {
                let answeredEarly = regions.endedEarly || (error as? HTTPClientError) == .requestStreamCancelled
                let status = delegate.collectedSoFar.status
                guard answeredEarly, status >= 300 else { throw Self.failure(error, of: request, beforeAnswer: status == 0, mayReuse: mayReuse) }
                collected = delegate.collectedSoFar
            }
        }
        try await regions.finish(checkingFiles: !regions.endedEarly)
        let response = UploadResponse(status: collected.status, headers: collected.headers, body: collected.body, url: request.url, method: request.method,
                                      httpVersion: collected.version.map(Self.curlName))
        return (response, collected.version)
    }

    /// `error` translated, marked ``ConnectionClosedBeforeAnswer`` for a `request` that asks
    /// for it when no head of an answer arrived (`beforeAnswer`) and either the server closed
    /// or reset a connection that may have come from the pool (`mayReuse`), or the request
    /// never reached an HTTP/2 server: ``FormPostClient`` may then send it again.
    static func failure(_ error: any Error, of request: TransportRequest, beforeAnswer: Bool, mayReuse: Bool) -> any Error {
        let translated = translate(error, url: request.url)
        guard request.marksClosedBeforeAnswer, beforeAnswer else { return translated }
        var closed = switch error {
        case let error as HTTPClientError: error == .remoteConnectionClosed
        case let error as IOError: error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        case let error as ChannelError: error == .ioOnClosedChannel || error == .eof
        default: false
        }
        #if canImport(Network)
        if case .posix(let code)? = NetworkFrameworkFailure(error) { closed = closed || code == ECONNRESET || code == EPIPE }
        #endif
        if streamNotTaken(error) || cancelledByThePool(error) { return ConnectionClosedBeforeAnswer(notTaken: translated) }
        return mayReuse && closed ? ConnectionClosedBeforeAnswer(closed: translated) : translated
    }

    /// Whether AsyncHTTPClient cancelled the request itself, which it does, unsent, when its
    /// pool hands the request to an HTTP/2 connection that is closing (a GOAWAY just came)
    /// — not the caller: the task is not cancelled.
    private static func cancelledByThePool(_ error: any Error) -> Bool {
        (error as? HTTPClientError) == .cancelled && !Task.isCancelled
    }

    /// Whether `error` closed an HTTP/2 stream the server did not take: refused
    /// (REFUSED_STREAM), or above the last stream a GOAWAY said the server would process —
    /// NIOHTTP2 closes those with CANCEL (RFC 9113 §8.7: such requests can be retried).
    /// nginx ends a connection with GOAWAY after `keepalive_requests` (1,000) requests.
    private static func streamNotTaken(_ error: any Error) -> Bool {
        guard let closed = error as? NIOHTTP2Errors.StreamClosed else { return false }
        return closed.errorCode == .refusedStream || closed.errorCode == .cancel
    }

    /// The body of `plan` as one buffer, when it is small bytes in memory (at most
    /// ``FileRegionBody/bufferSize``) and sending it is one write: AsyncHTTPClient's own
    /// `execute` then sends it as it sends any buffer, without a delegate or a body pump.
    private static func bytesInOneWrite(_ plan: BodyPlan) -> ByteBuffer? {
        guard let length = plan.contentLength, length <= FileRegionBody.bufferSize else { return nil }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(Int(length))
        for segment in plan.segments {
            guard case .bytes(let bytes) = segment else { return nil }
            buffer.writeBytes(bytes)
        }
        return buffer
    }

    /// A version as curl names it: `2` for HTTP/2, `1.1`, `1.0`.
    private static func curlName(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "1.1"
        case (2, _): "2"
        case (1, 0): "1.0"
        default: version.major >= 2 ? String(version.major) : "\(version.major).\(version.minor)"
        }
    }
    /// Maps AsyncHTTPClient, NIO and Network.framework errors to ``UploadError``; body
    /// errors pass through.
    static func translate(_ error: any Error, url: URL) -> any Error {
        let host = url.host ?? ""
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        #if canImport(Network)
        if let failure = NetworkFrameworkFailure(error) { return failure.error(host: host, port: port) }
        #endif
        switch error {
        case is UploadError, is CancellationError:
            return error
        case let error as NIOTooManyBytesError:
            return UploadError.responseTooLarge(limit: error.maxBytes ?? 0)
        case let error as HTTPClientError where error == .connectTimeout:
            return UploadError.timedOut("connecting to \(host) took too long")
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout:
            return UploadError.timedOut("no complete answer from \(host) in time")
        case let error as HTTPClientError where error == .cancelled:
            return CancellationError()
        case let error as HTTPClientError where error == .proxyAuthenticationRequired:
            return UploadError.proxyRefused(status: 407)
        case let error as HTTPClientError where error == .invalidProxyResponse:
            return UploadError.proxyRefused(status: nil)
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return UploadError.untrustedCertificate(host: host, reason: "it is not issued for the host name \(host)")
        case let error as NIOSSLError:
            return TLSFailure(error).uploadError(host: host)
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return UploadError.cannotResolve(host: host, reason: "no address was found for it")
            }
            let reason = error.connectionErrors.last.map { ($0.error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? String(describing: $0.error) }
            return UploadError.cannotConnect(host: host, port: port, reason: reason ?? "connection failed")
        case let error as IOError where [ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode):
            return UploadError.cannotConnect(host: host, port: port, reason: String(cString: strerror(error.errnoCode)))
        case is SocketAddressError:
            return UploadError.cannotResolve(host: host, reason: "no address was found for it")
        case let error as NIOHTTP2Errors.StreamClosed:
            return UploadError.transport("the server reset the HTTP/2 stream (\(error.errorCode))")
        case let error as ChannelError:
            if case .connectTimeout = error { return UploadError.timedOut("connecting to \(host) took too long") }
            return UploadError.transport(String(describing: error))
        case is HTTPClientError, is IOError:
            return UploadError.transport(String(describing: error))
        default:
            return error
        }
    }
}
