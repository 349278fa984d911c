#if Vapor
import FormPostServer
import Vapor

extension RoutesBuilder {
    /// Mounts FormPost's receivers as `formpost serve` answers, every route streaming its
    /// body: multipart forms on `POST path` (``FormPostServer/UploadReceiver``); with
    /// `resumable`, a `POST` or `PUT` there that asks for a resumable upload
    /// (`Upload-Complete`) creates one (``FormPostServer/ResumableUploadReceiver``), whose
    /// resources answer under its base path; with `tus`, tus 1.0 under its base path.
    /// With `uploadPage`, `GET path` (and `HEAD`) answers ``FormPostServer/UploadPage``,
    /// which sends its files to `path`: resumable uploads when `resumable` takes forms, one
    /// request each form otherwise.
    /// Mount them on the application itself, not a group with a prefix: the receivers'
    /// `Location`s are the absolute paths they were given. `path` must not be tus's or the
    /// draft's base path (their routes would take each other's requests): that traps. What `formpost serve` adds
    /// around the receivers (`UploadServer`: signed URLs, authorization, health, metrics,
    /// trusted proxies, connection limits) is not mounted here.
    public func receiveUploads(at path: String = "/upload", receiver: UploadReceiver, tus: TusReceiver? = nil,
                               resumable: ResumableUploadReceiver? = nil, uploadPage: Bool = false) {
        let formPath = Self.components(path)
        precondition(tus.map { Self.components($0.basePath) != formPath } ?? true, "receiveUploads: the forms' path is tus's base path")
        precondition(resumable.map { Self.components($0.basePath) != formPath } ?? true, "receiveUploads: the forms' path is the draft's base path")
        if uploadPage {
            let takesForms = resumable?.takesForms == true
            // Vapor answers a HEAD with the GET route when no HEAD route is registered.
            get(formPath) { request -> Response in
                Response(UploadPage.response(head: request.method == .HEAD, resumable: takesForms))
            }
        }
        for method in [HTTPMethod.POST, .PUT] {
            on(method, formPath, body: .stream) { request async -> Response in
                if let resumable, resumable.handles(request) { return await resumable.respond(to: request) }
                return await receiver.respond(to: request)
            }
        }
        if let tus {
            let base = Self.components(tus.basePath)
            for method in [HTTPMethod.POST, .HEAD, .GET, .PATCH, .DELETE, .OPTIONS] {
                for target in [base, base + [.catchall]] {
                    on(method, target, body: .stream) { request async -> Response in await tus.respond(to: request) }
                }
            }
        }
        if let resumable {
            let resources = Self.components(resumable.basePath) + [.catchall]
            for method in [HTTPMethod.HEAD, .GET, .PATCH, .DELETE, .OPTIONS] {
                on(method, resources, body: .stream) { request async -> Response in await resumable.respond(to: request) }
            }
            on(.OPTIONS, formPath, body: .stream) { request async -> Response in await resumable.respond(to: request) }
        }
    }

    private static func components(_ path: String) -> [PathComponent] {
        path.split(separator: "/").map { PathComponent(stringLiteral: String($0)) }
    }
}
#endif
