import FormPostReceiving
import Hummingbird

extension TusReceiver {
    /// Answers one request under ``basePath`` of a Hummingbird router (``respond(to:)`` on
    /// Hummingbird's types).
    @Sendable public func respond(to request: Request, context: some RequestContext) async -> Response {
        Response(await respond(to: ReceiverRequest(request, context: context)), context: context)
    }
}

extension ResumableUploadReceiver {
    /// Whether Hummingbird's `request` is this receiver's (``handles(_:)-(ReceiverRequest)``).
    public func handles(_ request: Request) -> Bool {
        handles(ReceiverRequest(method: request.method, path: request.uri.path, headers: request.headers))
    }

    /// Answers one request that ``handles(_:)-(Request)`` of a Hummingbird router
    /// (``respond(to:)`` on Hummingbird's types). With a ``ReceiverRequestContext``, a `104
    /// Upload Resumption Supported` goes out before the body is read.
    @Sendable public func respond(to request: Request, context: some RequestContext) async -> Response {
        Response(await respond(to: ReceiverRequest(request, context: context)), context: context)
    }
}
