#if Vapor
import FormPostServer
import Multipart
import Vapor

/// Answers Vapor requests with FormPost's receivers: the request as a ``ReceiverRequest``
/// (its body streamed), the answer as Vapor's `Response`.
enum VaporReceiving {
    /// Answers `request` with `respond`.
    static func answer(_ request: Request, with respond: @escaping @Sendable (ReceiverRequest) async -> ReceiverResponse) async -> Response {
        let connection = VaporReceiverConnection(isMultiplexedStream: request.version.major == 2)
        let receiving = ReceiverRequest(request, connection: connection)
        return Response(await connection.answer { await respond(receiving) })
    }
}

extension UploadReceiver {
    /// Answers one Vapor request (see ``FormPostServer/UploadReceiver/respond(to:)``). Its
    /// route must stream the body: `app.on(.POST, "upload", body: .stream) { try await receiver.respond(to: $0) }`.
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
