#if Vapor
import FormPostServer
import Multipart
import Vapor

/// Answers Vapor requests with FormPost's receivers: the request as a ``ReceiverRequest``
/// (its body streamed through a ``VaporBodyReader``), the answer as Vapor's `Response`.
enum VaporReceiving {
    /// Answers `request` with `respond`. After an answer that ends the exchange before the
    /// body's end (``ReceiverResponse/endsExchange``), what the client still sends is read
    /// and dropped for ``ReceiverResponse/lingeringTime``, as Hummingbird's adapter does
    /// before it closes the connection; Vapor gives no way to close it.
    static func answer(_ request: Request, with respond: @Sendable (ReceiverRequest) async -> ReceiverResponse) async -> Response {
        let reader = VaporBodyReader(request.body)
        let connection = VaporReceiverConnection(body: reader, isMultiplexedStream: request.version.major == 2)
        let answer = await respond(ReceiverRequest(request, body: ReceiverRequestBody(VaporRequestBody(reader: reader)), connection: connection))
        if answer.endsExchange {
            Task { await reader.drain(for: ReceiverResponse.lingeringTime) }
        }
        return Response(answer)
    }
}

extension UploadReceiver {
    /// Answers one Vapor request (see ``FormPostServer/UploadReceiver/respond(to:)``). Its
    /// route must stream the body: `app.on(.POST, "upload", body: .stream) { await receiver.respond(to: $0) }`.
    public func respond(to request: Request) async -> Response {
        await VaporReceiving.answer(request) { await respond(to: $0) }
    }
}

extension TusReceiver {
    /// Answers one Vapor request under ``FormPostServer/TusReceiver/basePath``.
    public func respond(to request: Request) async -> Response {
        await VaporReceiving.answer(request) { await respond(to: $0) }
    }
}

extension ResumableUploadReceiver {
    /// Answers one Vapor request that this receiver handles (see
    /// ``FormPostServer/ResumableUploadReceiver/handles(_:)-(ReceiverRequest)``).
    public func respond(to request: Request) async -> Response {
        await VaporReceiving.answer(request) { await respond(to: $0) }
    }

    /// Whether Vapor's `request` is this receiver's.
    public func handles(_ request: Request) -> Bool {
        handles(ReceiverRequest(request))
    }
}

extension Request {
    /// The parts of this request's `multipart/form-data` body, one at a time as the body
    /// streams (see ``FormPostServer/FormParts``); the route must stream the body.
    ///
    /// - Throws: `MultipartError/missingBoundary(contentType:)` when the request is not multipart.
    public func formParts(limits: MultipartParserLimits = MultipartParserLimits()) throws -> FormParts<Request.Body> {
        try FormParts(contentType: headers.first(name: .contentType) ?? "", body: body, limits: limits)
    }
}
#endif
