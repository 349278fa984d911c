import HTTPTypes

/// What an ``UploadServer`` answers, whichever HTTP server takes its requests: the health
/// endpoints, the signature and authorization gates, the upload page, then tus, the IETF
/// draft and multipart forms; with metrics, `GET /metrics` and the counts of every request.
struct UploadRoutes: Sendable {
    let receiver: UploadReceiver
    let tus: TusReceiver?
    let resumable: ResumableUploadReceiver?
    let servesPage: Bool
    let health: ServerHealth?
    let trustedProxies: TrustedProxies
    let signatureGate: SignatureGate?
    let authorizationGate: AuthorizationGate?
    let metrics: MetricsEndpoint?

    /// The routes of `server`.
    init(_ server: UploadServer) {
        receiver = server.receiver
        tus = server.tus
        resumable = server.resumable
        servesPage = server.uploadPage
        health = server.health
        trustedProxies = server.trustedProxies
        let beginning = UploadBeginning(tusBasePath: server.tus?.basePath, resumableBasePath: server.resumable?.basePath)
        signatureGate = server.uploadSigner.map { SignatureGate(signer: $0, clockSkew: UploadURLSigner.defaultClockSkew, beginning: beginning) }
        authorizationGate = server.authorize.map { AuthorizationGate(beginning: beginning, authorize: $0, logger: server.receiver.logger) }
        metrics = server.metrics
    }

    /// Answers `request`, whose ``ReceiverRequest/clientAddress`` is its connection's peer.
    func respond(to request: ReceiverRequest) async -> ReceiverResponse {
        guard let metrics else { return await route(request) }
        if request.path == MetricsEndpoint.path {
            tus?.reportInProgress()
            resumable?.reportInProgress()
        }
        if let answer = metrics.response(to: request) { return answer }
        let started = ContinuousClock.now
        var counted = request
        counted.body = ReceiverRequestBody(WatchedBody(base: request.body) { bytes, _ in ReceiverMetrics.received(bytes) })
        let response = await route(counted)
        ReceiverMetrics.request(method: request.method.rawValue, status: response.status.code, duration: ContinuousClock.now - started)
        return response
    }

    private func route(_ request: ReceiverRequest) async -> ReceiverResponse {
        var request = request
        if !trustedProxies.isEmpty { request.clientAddress = trustedProxies.client(of: request.headers, peer: request.clientAddress) }
        if let health, let answer = await health.response(to: request) { return answer }
        if let refusal = signatureGate?.check(&request) {
            RequestLogLine().log(request, answered: refusal, details: ["refused": "no valid signed URL"], to: receiver.logger)
            return refusal
        }
        if let authorizationGate, let refusal = await authorizationGate.check(&request) { return refusal }
        if servesPage, request.path == "/", request.method == .get || request.method == .head {
            return UploadPage.response(head: request.method == .head, resumable: resumable?.takesForms == true)
        }
        if request.headers[.expect]?.lowercased() == "100-continue", [.post, .put, .patch].contains(request.method) {
            // The body will be read: a client that waits for leave to send it (curl
            // past 1 MiB) gets it at once instead of after its own timeout.
            await request.connection?.sendInterim(.continue, fields: [:])
        }
        if let tus, tus.handles(request.path) { return await tus.respond(to: request) }
        if let resumable, resumable.handles(request) { return await resumable.respond(to: request) }
        return await receiver.respond(to: request)
    }
}
