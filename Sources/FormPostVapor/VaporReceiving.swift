#if Vapor
import FormPostReceiving
import Multipart
import NIOCore
import Vapor

/// Answers Vapor requests with FormPost's receivers: the request as a ``ReceiverRequest``
/// (its body streamed through one ``VaporBodyPump``), the answer as Vapor's `Response`.
enum VaporReceiving {
    /// Answers `request` with `respond`. Once it has answered, the receiver is done with
    /// the body: what the client still sends is read and dropped. After an answer that ends
    /// the exchange before the body's end (``ReceiverResponse/endsExchange``), for at most
    /// ``ReceiverResponse/lingeringTime``, while the answer's body is held open: the client
    /// reads the whole answer, and when it is still sending then, the answer's end fails,
    /// and Vapor closes the connection (HTTP/1.1) or resets the stream (HTTP/2), as
    /// Hummingbird's adapter closes it.
    static func answer(_ request: Request, with respond: @Sendable (ReceiverRequest) async -> ReceiverResponse) async -> Response {
        let pump = VaporBodyPump(request.body)
        let connection = VaporReceiverConnection(body: pump, isMultiplexedStream: request.version.major == 2)
        let answer = await respond(ReceiverRequest(request, body: ReceiverRequestBody(VaporRequestBody(pump: pump)), connection: connection))
        guard answer.endsExchange else {
            Task { await pump.drained() }
            return Response(answer)
        }
        return Response(answer) { writer in
            if await pump.drained(within: ReceiverResponse.lingeringTime) {
                try await writer.write(.end)
            } else {
                try await writer.write(.error(ChannelError.eof))
            }
        }
    }
}

extension UploadReceiver {
    /// Answers one Vapor request (see ``FormPostReceiving/UploadReceiver/respond(to:)``). Its
    /// route must stream the body: `app.on(.POST, "upload", body: .stream) { await receiver.respond(to: $0) }`.
    public func respond(to request: Request) async -> Response {
        await VaporReceiving.answer(request) { await respond(to: $0) }
    }
}

extension TusReceiver {
    /// Answers one Vapor request under ``FormPostReceiving/TusReceiver/basePath``.
    public func respond(to request: Request) async -> Response {
        await VaporReceiving.answer(request) { await respond(to: $0) }
    }
}

extension ResumableUploadReceiver {
    /// Answers one Vapor request that this receiver handles (see
    /// ``FormPostReceiving/ResumableUploadReceiver/handles(_:)-(ReceiverRequest)``).
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
    /// streams (see ``FormPostReceiving/FormParts``); the route must stream the body.
    ///
    /// - Throws: `MultipartError/missingBoundary(contentType:)` when the request is not multipart.
    public func formParts(limits: MultipartParserLimits = MultipartParserLimits()) throws -> FormParts<Request.Body> {
        try FormParts(contentType: headers.first(name: .contentType) ?? "", body: body, limits: limits)
    }
}
#endif
