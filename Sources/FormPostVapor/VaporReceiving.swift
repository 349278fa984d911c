#if Vapor
import FormPostReceiving
import Multipart
import NIOCore
import Vapor

/// Answers Vapor requests with FormPost's receivers: the request as a ``ReceiverRequest``
/// (its body streamed through one ``VaporBodyPump``), the answer as Vapor's `Response`.
enum VaporReceiving {
    /// Answers `request` with `respond`. Once it has answered, the receiver is done with
    /// the body: what the client still sends is read and dropped. After an answer with a
    /// body that ends the exchange before the request's body ended
    /// (``ReceiverResponse/endsExchange``), on HTTP/1.1, for at most
    /// ``ReceiverResponse/lingeringTime``, while the answer's end is held back: the client
    /// reads the whole answer, and when it is still sending then, the answer's end is failed,
    /// on which Vapor closes the connection, as Hummingbird's adapter closes it. On HTTP/2 the
    /// answer ends at once, and what the client still sends on the stream is dropped for the
    /// lingering time, then no longer read: Vapor gives a handler no way to reset a stream.
    static func answer(_ request: Request, with respond: @Sendable (ReceiverRequest) async -> ReceiverResponse) async -> Response {
        let pump = VaporBodyPump(request)
        let connection = VaporReceiverConnection(body: pump, isMultiplexedStream: request.version.major == 2)
        let answer = await respond(ReceiverRequest(request, body: ReceiverRequestBody(VaporRequestBody(pump: pump)), connection: connection))
        pump.end()
        guard answer.endsExchange else { return Response(answer) }
        let drained = Task { await pump.drained(within: ReceiverResponse.lingeringTime) }
        guard request.version.major == 1, answer.body.readableBytes > 0 else { return Response(answer) }
        return Response(answer) { writer in
            try await writer.write(await drained.value ? .end : .error(ChannelError.eof))
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
    /// streams (see ``FormPostReceiving/FormParts``); the route must stream the body. The
    /// body is read with Vapor's `drain`, a few buffers ahead of the parts read; what a
    /// handler leaves unread is read and dropped.
    ///
    /// - Throws: `MultipartError/missingBoundary(contentType:)` when the request is not multipart.
    public func formParts(limits: MultipartParserLimits = MultipartParserLimits()) throws -> FormParts<ReceiverRequestBody> {
        try FormParts(contentType: headers.first(name: .contentType) ?? "", body: ReceiverRequestBody(VaporRequestBody(self)), limits: limits)
    }
}
#endif
