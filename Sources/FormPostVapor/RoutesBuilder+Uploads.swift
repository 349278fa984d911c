#if Vapor
import FormPostReceiving
import Vapor

extension RoutesBuilder {
    /// Mounts FormPost's receivers as `formpost serve` answers, every route streaming its
    /// body: multipart forms on `POST path` (``FormPostReceiving/UploadReceiver``); with
    /// `resumable`, a `POST` or `PUT` there that asks for a resumable upload
    /// (`Upload-Complete`) creates one (``FormPostReceiving/ResumableUploadReceiver``), whose
    /// resources answer under its base path; with `tus`, tus 1.0 under its base path.
    /// With `uploadPage`, `GET path` (and `HEAD`) answers ``FormPostReceiving/UploadPage``,
    /// which sends its files to `path`. No gate: ``receiveUploads(at:routes:)`` mounts the
    /// same receivers with signed URLs, authorization, trusted proxies, health and metrics.
    public func receiveUploads(at path: String = "/upload", receiver: UploadReceiver, tus: TusReceiver? = nil,
                               resumable: ResumableUploadReceiver? = nil, uploadPage: Bool = false) {
        let formPath = "/" + path.split(separator: "/").joined(separator: "/")
        receiveUploads(at: path, routes: UploadRoutesConfiguration(receiver: receiver, tus: tus, resumable: resumable,
                                                                   pagePath: uploadPage ? formPath : nil))
    }

    /// Mounts ``FormPostReceiving/UploadRoutes`` of `routes` — the receivers and their gates,
    /// as `formpost serve` answers — every route streaming its body: multipart forms (and
    /// the IETF draft's creations) on `POST` and `PUT path`, tus under its base path, the
    /// draft's uploads under theirs, the upload page on `GET` ``FormPostReceiving/UploadRoutesConfiguration/pagePath``
    /// (whose forms go to the same path: `POST` and `PUT` there too), and `/healthz`,
    /// `/readyz` and `/metrics` when configured. The page path is compared with the request's
    /// as it is given: `/upload`, not `upload` or `/upload/`.
    ///
    /// Vapor reads a path's leading slashes as one (`//files` is `/files`), and finds the
    /// route by its segments with the empty ones dropped; the routes then decide again from
    /// the path as Vapor read it (`/files/.`, `/files//` are 404 under tus's base path, as on
    /// Hummingbird), and every gate goes by that one decision. Mount them on the application itself, not a group with
    /// a prefix: the receivers' `Location`s are the absolute paths they were given. `path`
    /// must not be tus's or the draft's base path (their routes would take each other's
    /// requests): that traps.
    public func receiveUploads(at path: String = "/upload", routes: UploadRoutesConfiguration) {
        let formPath = Self.components(path)
        precondition(routes.tus.map { Self.components($0.basePath) != formPath } ?? true, "receiveUploads: the forms' path is tus's base path")
        precondition(routes.resumable.map { Self.components($0.basePath) != formPath } ?? true,
                     "receiveUploads: the forms' path is the draft's base path")
        let answering = UploadRoutes(routes)
        let respond: @Sendable (Request) async -> Response = { request in
            await VaporReceiving.answer(request) { await answering.respond(to: $0) }
        }
        var targets: [(methods: [HTTPMethod], path: [PathComponent])] = [([.POST, .PUT, .OPTIONS], formPath)]
        if let pagePath = routes.pagePath {
            // Vapor answers a HEAD with the GET route when no HEAD route is registered. The
            // page sends its forms to the URL it was loaded from.
            let page = Self.components(pagePath)
            targets.append(([.GET] + (page == formPath ? [] : [.POST, .PUT, .OPTIONS]), page))
        }
        let everyMethod: [HTTPMethod] = [.POST, .PUT, .HEAD, .GET, .PATCH, .DELETE, .OPTIONS]
        if let tus = routes.tus {
            let base = Self.components(tus.basePath)
            targets += [(everyMethod, base), (everyMethod, base + [.catchall])]
        }
        if let resumable = routes.resumable {
            let base = Self.components(resumable.basePath)
            targets += [(everyMethod, base), (everyMethod, base + [.catchall])]
        }
        if routes.health != nil {
            targets += [([.GET], Self.components(ServerHealth.livenessPath)), ([.GET], Self.components(ServerHealth.readinessPath))]
        }
        if routes.metrics != nil { targets.append(([.GET], Self.components(MetricsEndpoint.path))) }
        for (methods, target) in targets {
            for method in methods { on(method, target, body: .stream, use: respond) }
        }
    }

    private static func components(_ path: String) -> [PathComponent] {
        path.split(separator: "/").map { PathComponent(stringLiteral: String($0)) }
    }
}
#endif
