import HTTPTypes

/// What a server of uploads answers, whichever HTTP server takes its requests (Hummingbird's
/// `UploadServer`, Vapor's `receiveUploads(at:routes:)`, or an adapter of your own): the
/// health endpoints, the signature and authorization gates, the upload page, then tus, the
/// IETF draft and multipart forms; with metrics, `GET /metrics` and the counts of every
/// request; with a ``CrossOriginPolicy``, CORS preflights and fields. Each request's route
/// is decided once, from its method, its path and its fields, and every gate and the
/// dispatch to a receiver go by it.
public struct UploadRoutes: Sendable {
    let receiver: UploadReceiver
    let tus: TusReceiver?
    let resumable: ResumableUploadReceiver?
    let router: ReceiverRouter
    let health: ServerHealth?
    let trustedProxies: TrustedProxies
    let signatureGate: SignatureGate?
    let authorizationGate: AuthorizationGate?
    let metrics: MetricsEndpoint?
    let crossOrigin: CrossOriginAnswers?

    /// The routes of `configuration`.
    public init(_ configuration: UploadRoutesConfiguration) {
        receiver = configuration.receiver
        tus = configuration.tus
        resumable = configuration.resumable
        router = ReceiverRouter(tusBasePath: configuration.tus?.basePath, resumableBasePath: configuration.resumable?.basePath,
                                pagePath: configuration.pagePath, servesHealth: configuration.health != nil,
                                servesMetrics: configuration.metrics != nil)
        health = configuration.health
        trustedProxies = configuration.trustedProxies
        signatureGate = configuration.uploadSigner.map { SignatureGate(signer: $0, clockSkew: UploadURLSigner.defaultClockSkew) }
        authorizationGate = configuration.authorize.map { AuthorizationGate(authorize: $0, logger: configuration.receiver.logger) }
        metrics = configuration.metrics
        crossOrigin = configuration.crossOrigin.map(CrossOriginAnswers.init)
    }

    /// Answers `request`, whose ``ReceiverRequest/clientAddress`` is its connection's peer
    /// and whose ``ReceiverRequest/path`` is as the server read it from the request line
    /// (the routes decode and normalise nothing: they compare it byte for byte; Hummingbird
    /// hands it as sent, Vapor with its leading slashes read as one).
    public func respond(to request: ReceiverRequest) async -> ReceiverResponse {
        let route = router.route(of: request)
        guard let metrics else { return await answer(request, route: route) }
        if route == .metrics {
            tus?.reportInProgress()
            resumable?.reportInProgress()
            if let answer = metrics.response(to: request) { return answer }
        }
        let started = ContinuousClock.now
        var counted = request
        counted.body = ReceiverRequestBody(WatchedBody(base: request.body) { bytes, _ in ReceiverMetrics.received(bytes) })
        let response = await answer(counted, route: route)
        ReceiverMetrics.request(method: request.method, status: response.status.code, duration: ContinuousClock.now - started)
        return response
    }

    private func answer(_ request: ReceiverRequest, route: ReceiverRoute) async -> ReceiverResponse {
        guard let crossOrigin else { return await gated(request, route: route) }
        // A preflight is the browser's, not an upload's: answered before any gate.
        if let preflight = crossOrigin.preflight(request) { return preflight }
        return crossOrigin.answer(await gated(request, route: route), to: request)
    }

    private func gated(_ request: ReceiverRequest, route: ReceiverRoute) async -> ReceiverResponse {
        var request = request
        if !trustedProxies.isEmpty { request.clientAddress = trustedProxies.client(of: request.headers, peer: request.clientAddress) }
        if route == .health, let health, let answer = await health.response(to: request) { return answer }
        if let refusal = signatureGate?.check(&request, route: route) {
            RequestLogLine().log(request, answered: refusal, details: ["refused": "no valid signed URL"], to: receiver.logger)
            return refusal
        }
        if let authorizationGate, let refusal = await authorizationGate.check(&request, route: route) { return refusal }
        if route == .page {
            return UploadPage.response(head: request.method == .head, resumable: resumable?.takesForms == true)
        }
        if request.headers[.expect]?.lowercased() == "100-continue", [.post, .put, .patch].contains(request.method) {
            // The body will be read: a client that waits for leave to send it (curl
            // past 1 MiB) gets it at once instead of after its own timeout.
            await request.connection?.sendInterim(.continue, fields: [:])
        }
        var respond: (@Sendable (ReceiverRequest) async -> ReceiverResponse)?
        var expiry = Duration.zero
        if route.resumableReceiver == .tus, let tus {
            respond = { await tus.respond(to: $0) }
            expiry = tus.expiry
        } else if route.resumableReceiver == .ietf, let resumable {
            respond = { await resumable.respond(to: $0) }
            expiry = resumable.expiry
        }
        if let respond {
            // Every Location a resumable receiver answers (a creation's, a completion's) is,
            // with signed URLs, bound to its upload.
            guard let signatureGate else { return await respond(request) }
            let binding = signatureGate.bindingLocations(of: &request, lifetime: max(expiry, .seconds(UploadURLSigner.maxLifetime)))
            return binding(await respond(request))
        }
        return await receiver.respond(to: request)
    }
}
