import FormPostReceiving
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL

/// An HTTP server running an `UploadReceiver` on `host:port` (port 0 picks a free one):
/// plaintext HTTP/1.1, or with a TLS configuration HTTPS — HTTP/2 for clients that offer
/// it by ALPN, HTTP/1.1 for the others. `GET /` answers `UploadPage`, a page to upload
/// from a browser, unless ``uploadPage`` is false. Resumable uploads go to ``tus`` (under
/// its base path) and to ``resumable`` (the IETF draft: requests with `Upload-Complete`,
/// and its upload resources). A request that expects `100-continue` gets it before its body
/// is read. With ``health``, `GET /healthz` and `GET /readyz` answer as `ServerHealth`
/// says; with ``uploadSigner``, every request that can begin an upload must carry a signed
/// URL of `UploadURLSigner`, checked before its body is read.
public struct UploadServer: Sendable {
    /// The receiver that answers every request.
    public let receiver: UploadReceiver
    /// The address to bind.
    public let host: String
    /// The port to bind; 0 for any free port.
    public let port: Int
    /// The level of the HTTP server's own log messages (the receiver logs one line per request).
    public let serverLogLevel: Logger.Level
    /// TLS for HTTPS, or nil for plaintext HTTP/1.1.
    public let tlsConfiguration: TLSConfiguration?
    /// How long a stalled connection is held, and how many are open at once.
    public let connectionLimits: ConnectionLimits
    /// The reverse proxies in front of the server, none by default. A request whose
    /// connection comes from one of them counts, and is logged, under the client address
    /// they forwarded (`Forwarded`, `X-Forwarded-For`; see `TrustedProxies`), and their
    /// connections are exempt from `ConnectionLimits/maxConnectionsPerAddress` (all their
    /// clients' come from them; `ConnectionLimits/maxConnections` still bounds them).
    /// It is the server's, not a receiver's: it describes the network in front of it, and
    /// holds for every receiver it runs and for its connections alike.
    public var trustedProxies = TrustedProxies()
    /// Decides whether each upload may begin, or nil to take every upload (the default).
    /// It is called once for every request that can begin an upload — a multipart form, a
    /// tus creation, a creation of the IETF draft; not a request on an existing upload
    /// resource, which goes on with an upload that was allowed — after the signed URL is
    /// checked (``uploadSigner``) and before a `100 Continue` is sent or a byte of the body
    /// is read. `UploadAuthorization/deny(status:message:)` is answered with its status
    /// and `{"error": message}`, `UploadAuthorization/unavailable(cause:)` with 503 and
    /// `Retry-After`; either way nothing is stored. `UploadAuthorization/allowWith(_:)`
    /// allows it with a tighter byte limit and metadata for its events (`UploadGrant`),
    /// which the request's ``ReceiverRequestContext/grant`` carries to the receiver.
    /// `UploadAuthorizationHook/authorize(_:)`
    /// asks an HTTP service, as `formpost serve --hook-url` does.
    public var authorize: (@Sendable (UploadAuthorizationRequest) async -> UploadAuthorization)?
    /// Which other origins' pages may upload from the browser (CORS), or nil for no CORS
    /// field at all (see `CrossOriginPolicy`).
    public var crossOrigin: CrossOriginPolicy?
    /// The receiver of resumable (tus) uploads, answering under its base path, or nil.
    public let tus: TusReceiver?
    /// The receiver of resumable uploads of the IETF draft, or nil.
    public let resumable: ResumableUploadReceiver?
    /// Whether `GET /` and `HEAD /` answer `UploadPage` (true), or go to the receiver
    /// like every other request (which answers 405).
    public let uploadPage: Bool
    /// The health endpoints (`/healthz`, `/readyz`), or nil for none.
    public let health: ServerHealth?
    /// The signer whose signed URLs every upload must come with, or nil to take uploads
    /// without one. With it, a resumable upload's `Location` carries the upload's token
    /// (`UploadURLSigner/uploadLocation(_:id:expires:)`), which every later request on the
    /// upload must carry too.
    public let uploadSigner: UploadURLSigner?
    /// `GET /metrics`, or nil for none. With it, the server counts through swift-metrics
    /// (see `MetricsEndpoint`): `formpost_requests_total{method,status}`,
    /// `formpost_request_duration_seconds{method}`, `formpost_received_bytes_total`,
    /// `formpost_open_connections`, `formpost_uploads_total{protocol,outcome}`,
    /// `formpost_uploads_in_progress{protocol}` and `formpost_hook_calls_total{event,outcome}`
    /// (the last three counted whether or not the endpoint is set).
    public let metrics: MetricsEndpoint?

    /// Creates a server for `receiver` on `host:port`; with `tlsConfiguration` (see
    /// ``serverTLSConfiguration(certificateChainPath:privateKeyPath:)``) it speaks HTTPS;
    /// with `tus`, resumable uploads are received under its base path, with `resumable`
    /// those of the IETF draft. With `uploadPage`, `GET /` answers `UploadPage`; with
    /// `health`, `/healthz` and `/readyz` answer; with `uploadSigner`, uploads need signed URLs.
    public init(receiver: UploadReceiver, host: String = "127.0.0.1", port: Int = 8080, serverLogLevel: Logger.Level = .warning,
                tlsConfiguration: TLSConfiguration? = nil, connectionLimits: ConnectionLimits = ConnectionLimits(), tus: TusReceiver? = nil,
                resumable: ResumableUploadReceiver? = nil, uploadPage: Bool = true, health: ServerHealth? = nil, uploadSigner: UploadURLSigner? = nil,
                metrics: MetricsEndpoint? = nil) {
        self.receiver = receiver
        self.host = host
        self.port = port
        self.serverLogLevel = serverLogLevel
        self.tlsConfiguration = tlsConfiguration
        self.connectionLimits = connectionLimits
        self.tus = tus
        self.resumable = resumable
        self.uploadPage = uploadPage
        self.health = health
        self.uploadSigner = uploadSigner
        self.metrics = metrics
    }

    /// A server TLS configuration from PEM files — a certificate chain (the server's own
    /// first) and its private key — checked now: each file must hold what it should, and
    /// the key must belong to the first certificate.
    ///
    /// - Throws: ``ServerTLSError``.
    public static func serverTLSConfiguration(certificateChainPath: String, privateKeyPath: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainPath)
        } catch {
            throw ServerTLSError.unreadableCertificate(path: certificateChainPath)
        }
        guard !chain.isEmpty else { throw ServerTLSError.unreadableCertificate(path: certificateChainPath) }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        } catch {
            throw ServerTLSError.unreadablePrivateKey(path: privateKeyPath)
        }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        guard (try? NIOSSLContext(configuration: configuration)) != nil else {
            throw ServerTLSError.keyDoesNotMatch(certificatePath: certificateChainPath, keyPath: privateKeyPath)
        }
        return configuration
    }

    /// What the server answers requests with: its receivers, its page at `/` (with
    /// ``uploadPage``) and its gates, as `UploadRoutes` takes them.
    public var routes: UploadRoutesConfiguration {
        UploadRoutesConfiguration(receiver: receiver, tus: tus, resumable: resumable, pagePath: uploadPage ? "/" : nil, health: health,
                                  uploadSigner: uploadSigner, metrics: metrics, trustedProxies: trustedProxies, crossOrigin: crossOrigin,
                                  authorize: authorize)
    }

    /// The Hummingbird application; run it with `runService()` (stops gracefully on
    /// SIGINT/SIGTERM) or in a `ServiceGroup` whose graceful shutdown you trigger to stop it.
    /// Stop it gracefully, not by cancelling the task that runs it: a connection accepted as
    /// that task is cancelled is dropped by NIO before it is served, and NIO traps on it
    /// ("Deinited NIOAsyncWriter without calling finish()", apple/swift-nio#2813). A graceful
    /// stop closes the listening socket and serves the connections already accepted.
    /// `onStarted` receives the bound port.
    ///
    /// With TLS, a connection that completes no handshake within the idle timeout is closed
    /// (Hummingbird's own timeout starts once the handshake has chosen HTTP/2 or HTTP/1.1).
    ///
    /// - Throws: an error from NIOSSL, when the server starts, if the TLS configuration cannot be used.
    public func application(onStarted: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        let routes = UploadRoutes(self.routes)
        let responder = CallbackResponder<ReceiverRequestContext> { request, context in
            Response(await routes.respond(to: ReceiverRequest(request, context: context)), channel: context.channel)
        }
        var logger = Logger(label: "formpost.server")
        logger.logLevel = serverLogLevel
        let idle = connectionLimits.idleTimeout
        let http1 = HTTP1Channel.Configuration(idleTimeout: TimeAmount(idle))
        let perAddress = ConnectionsPerAddress(limit: connectionLimits.maxConnectionsPerAddress, exempt: trustedProxies)
        let server: HTTPServerBuilder = tlsConfiguration.map { tls in
            HTTPServerBuilder { responder in
                let upgrade = try HTTP2UpgradeChannel(tlsConfiguration: tls, configuration: .init(idleTimeout: idle, streamConfiguration: http1), responder: responder)
                return AddressLimitedChannel(inner: TLSFirstByteDeadlineChannel(upgrade: upgrade, timeout: TimeAmount(idle)), connections: perAddress,
                                             countsConnections: metrics != nil)
            }
        } ?? HTTPServerBuilder { responder in
            AddressLimitedChannel(inner: BoundedHTTP1Channel(responder: responder, configuration: http1), connections: perAddress, countsConnections: metrics != nil)
        }
        return Application(
            responder: responder,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "formpost",
                                 availableConnectionsDelegate: MaximumAvailableConnections(connectionLimits.maxConnections)),
            onServerRunning: { channel in await onStarted(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
