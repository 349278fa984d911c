#if Vapor
import FormPostServer
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// Reads a Vapor request's streamed body for the receivers, and what Vapor gives a handler
/// no other way to do: ending the body alone (``end()``: the read waiting is cancelled and
/// the body ends as a cut connection's would, while the request's task goes on), and
/// reading what a client still sends after an early answer (``drain(for:)``), so that
/// Vapor goes on reading the connection instead of stopping at a body no one reads.
final class VaporBodyReader: @unchecked Sendable {
    private let body: Request.Body
    /// Touched by one read at a time: by the receiver's reads, then by ``drain(for:)``.
    private var iterator: Request.Body.AsyncIterator?
    private let state = NIOLockedValueBox<(reading: Task<ByteBuffer?, any Error>?, ended: Bool)>((nil, false))

    init(_ body: Request.Body) {
        self.body = body
    }

    /// The body's next buffer, nil at its end; throws once ``end()`` was called.
    func next() async throws -> ByteBuffer? {
        let read = Task { try await self.nextFromVapor() }
        let ended = state.withLockedValue { state in
            state.reading = read
            return state.ended
        }
        if ended { read.cancel() }
        defer { state.withLockedValue { $0.reading = nil } }
        let buffer = try await withTaskCancellationHandler { try await read.value } onCancel: { read.cancel() }
        if state.withLockedValue({ $0.ended }) { throw ChannelError.eof }
        return buffer
    }

    /// Ends the body: the read waiting (if any) is cancelled, and every read from now on throws.
    func end() {
        let read = state.withLockedValue { state in
            state.ended = true
            return state.reading
        }
        read?.cancel()
    }

    /// Reads and drops what is left of the body, for at most `time`; then the body is let
    /// go (Vapor stops reading the connection: its idle timeout, when set, closes it).
    func drain(for time: Duration) async {
        let draining = Task {
            while (try? await self.nextFromVapor()) != nil {}
        }
        let stop = Task {
            try? await Task.sleep(for: time)
            draining.cancel()
        }
        await draining.value
        stop.cancel()
    }

    private func nextFromVapor() async throws -> ByteBuffer? {
        if iterator == nil { iterator = body.makeAsyncIterator() }
        return try await iterator?.next()
    }
}

/// A Vapor request's body as the receivers read it, through a ``VaporBodyReader``.
struct VaporRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let reader: VaporBodyReader

    func makeAsyncIterator() -> Iterator {
        Iterator(reader: reader)
    }

    struct Iterator: AsyncIteratorProtocol {
        let reader: VaporBodyReader

        mutating func next() async throws -> ByteBuffer? {
            try await reader.next()
        }
    }
}
#endif
