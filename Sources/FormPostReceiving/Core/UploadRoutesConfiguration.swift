/// Everything ``UploadRoutes`` answers with, in one value: the receivers, where the upload
/// page is, and the gates around them. What `formpost serve` assembles from its flags, and
/// what an app on any HTTP server (Hummingbird's `UploadServer`, Vapor's
/// `receiveUploads(at:routes:)`) hands to ``UploadRoutes``.
public struct UploadRoutesConfiguration: Sendable {
    /// The receiver of multipart forms: every `POST` or `PUT` that is no other route's.
    public var receiver: UploadReceiver
    /// The receiver of tus 1.0 uploads, answering under its base path, or nil.
    public var tus: TusReceiver?
    /// The receiver of the IETF draft's resumable uploads, or nil.
    public var resumable: ResumableUploadReceiver?
    /// The path whose `GET` and `HEAD` answer ``UploadPage`` (`/` for `formpost serve`),
    /// or nil for no page.
    public var pagePath: String?
    /// The health endpoints (`/healthz`, `/readyz`), or nil for none.
    public var health: ServerHealth?
    /// The signer whose signed URLs every upload must come with, or nil to take uploads
    /// without one (see ``UploadURLSigner``).
    public var uploadSigner: UploadURLSigner?
    /// `GET /metrics` and the counts of every request, or nil for none (see ``MetricsEndpoint``).
    public var metrics: MetricsEndpoint?
    /// The reverse proxies in front of the server, none by default: a request whose peer is
    /// one of them counts, and is logged, under the client address they forwarded.
    public var trustedProxies = TrustedProxies()
    /// Which other origins' pages may upload (CORS), or nil to answer no CORS field at all.
    public var crossOrigin: CrossOriginPolicy?
    /// Decides whether each upload may begin, or nil to take every upload: called once for
    /// every request that begins one, after the signed URL is checked and before a byte of
    /// its body is read (see ``UploadAuthorization``).
    public var authorize: (@Sendable (UploadAuthorizationRequest) async -> UploadAuthorization)?

    /// A configuration of `receiver`, and of the other receivers and gates given.
    public init(receiver: UploadReceiver, tus: TusReceiver? = nil, resumable: ResumableUploadReceiver? = nil, pagePath: String? = nil,
                health: ServerHealth? = nil, uploadSigner: UploadURLSigner? = nil, metrics: MetricsEndpoint? = nil,
                trustedProxies: TrustedProxies = TrustedProxies(), crossOrigin: CrossOriginPolicy? = nil,
                authorize: (@Sendable (UploadAuthorizationRequest) async -> UploadAuthorization)? = nil) {
        self.receiver = receiver
        self.tus = tus
        self.resumable = resumable
        self.pagePath = pagePath
        self.health = health
        self.uploadSigner = uploadSigner
        self.metrics = metrics
        self.trustedProxies = trustedProxies
        self.crossOrigin = crossOrigin
        self.authorize = authorize
    }
}
