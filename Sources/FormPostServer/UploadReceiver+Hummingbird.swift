import FormPostReceiving
import Hummingbird

extension UploadReceiver {
    /// Answers one request of a Hummingbird router (``respond(to:)`` on Hummingbird's types).
    /// With a ``ReceiverRequestContext``, an answer given while the client may still be
    /// sending closes the connection once written (see `ReceiverResponse/endsExchange`).
    @Sendable public func respond(to request: Request, context: some RequestContext) async -> Response {
        Response(await respond(to: ReceiverRequest(request, context: context)), context: context)
    }
}
