import HTTPTypes
import ResumableHTTP

/// Decides each request's ``ReceiverRoute`` from its method, path and fields: the one
/// reading of a request that ``UploadRoutes`` and every gate use.
///
/// In order: the health endpoints and `/metrics` (when served); the tus base path and
/// every path under it (``UploadResourcePath``: only the base path itself, with or without
/// one trailing `/`, creates; a valid upload ID is an upload; anything else there is 404);
/// the same for the draft's base path, where nothing is created; the upload page; a
/// request asking for a resumable upload of the draft (`Upload-Complete`) or an `OPTIONS`,
/// to the draft's receiver; every other `POST` or `PUT` is a multipart form.
struct ReceiverRouter: Sendable {
    /// The tus receiver's base path, or nil when there is none.
    let tusBasePath: String?
    /// The draft's receiver's base path, or nil when there is none.
    let resumableBasePath: String?
    /// The path whose `GET` is the upload page, or nil for none.
    var pagePath: String?
    /// Whether `/healthz` and `/readyz` are answered.
    var servesHealth = false
    /// Whether `/metrics` is answered.
    var servesMetrics = false

    /// The route of a request of `method` on `path` with `headers`.
    func route(method: HTTPRequest.Method, path: String, headers: HTTPFields) -> ReceiverRoute {
        let reads = method == .get || method == .head
        if servesHealth, reads, path == ServerHealth.livenessPath || path == ServerHealth.readinessPath { return .health }
        if servesMetrics, reads, path == MetricsEndpoint.path { return .metrics }
        let begins = method == .post || method == .put
        if let tusBasePath {
            switch UploadResourcePath(path, basePath: tusBasePath) {
            case .collection: return begins ? .creation(.tus) : .resumable(.tus)
            case .upload(let id): return .upload(.tus, id: id)
            case .unknown: return .notFound(.tus)
            case .outside: break
            }
        }
        if let resumableBasePath {
            switch UploadResourcePath(path, basePath: resumableBasePath) {
            case .upload(let id): return .upload(.ietf, id: id)
            case .collection, .unknown: return .notFound(.ietf)
            case .outside: break
            }
        }
        if let pagePath, reads, path == pagePath { return .page }
        if resumableBasePath != nil {
            let asks = DraftInterop.asksForResumableUpload(headers)
            if begins, asks { return .creation(.ietf) }
            if method == .options || asks { return .resumable(.ietf) }
        }
        return begins ? .creation(.multipart) : .other
    }

    /// The route of `request`.
    func route(of request: ReceiverRequest) -> ReceiverRoute {
        route(method: request.method, path: request.path, headers: request.headers)
    }
}
