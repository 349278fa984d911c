#if Vapor
import FormPostReceiving
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// Reads a Vapor request's streamed body with Vapor's `drain` (not its `AsyncSequence`,
/// whose backpressure delegate can trap, vapor/vapor#3153), handing each buffer to the
/// receiver as it asks for one. Vapor reads the next buffer only once the receiver took the
/// one before: the future a buffer's handler returns completes when it is taken. The pump
/// also does what Vapor gives a handler no other way to do: ending the body for the
/// receiver alone (``end()``: its read waiting throws as a cut connection's would, while
/// the request's task goes on), and reading and dropping what a client still sends once the
/// receiver is done with the body, so that Vapor reads the connection on
/// (``drained(within:)``).
final class VaporBodyPump: Sendable {
    private struct State {
        /// The receiver's read waiting for a buffer.
        var reader: CheckedContinuation<ByteBuffer?, any Error>?
        /// A buffer read from Vapor, and the promise Vapor waits on before it reads on.
        var offered: (buffer: ByteBuffer, taken: EventLoopPromise<Void>)?
        /// How the body ended, once it did (read to its end, or failed).
        var finished: Result<Void, any Error>?
        /// Whether the receiver is done with the body (``end()``): its reads throw, and
        /// the buffers still sent are dropped.
        var ended = false
        /// Whether the pump stopped reading (its time to drain ran out): Vapor's next read
        /// fails.
        var stopped = false
        /// Whether ``whole`` was completed.
        var settled = false
    }

    private let state = NIOLockedValueBox(State())
    private let eventLoop: any EventLoop
    /// Completed once the body was read to its end (true), failed, or the pump stopped
    /// reading it (false).
    private let whole: EventLoopPromise<Bool>

    /// Starts reading `request`'s body.
    init(_ request: Request) {
        eventLoop = request.eventLoop
        whole = request.eventLoop.makePromise(of: Bool.self)
        request.body.drain { self.take($0) }
    }

    /// The body's next buffer, nil at its end; throws once ``end()`` was called, when the
    /// body failed, or when the calling task is cancelled.
    func next() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<ByteBuffer?, any Error>) in
                let outcome: (Result<ByteBuffer?, any Error>, EventLoopPromise<Void>?)? = state.withLockedValue { state in
                    if state.ended || Task.isCancelled { return (.failure(ChannelError.eof), nil) }
                    if let offered = state.offered {
                        state.offered = nil
                        return (.success(offered.buffer), offered.taken)
                    }
                    if let finished = state.finished { return (finished.map { nil }, nil) }
                    state.reader = reader
                    return nil
                }
                guard let (result, taken) = outcome else { return }
                taken?.succeed()
                reader.resume(with: result)
            }
        } onCancel: {
            end()
        }
    }

    /// Ends the body for the receiver: the read waiting (if any) and every read from now on
    /// throw. The pump goes on reading and dropping what the client sends.
    func end() {
        let (reader, offered) = state.withLockedValue { state in
            state.ended = true
            defer { (state.reader, state.offered) = (nil, nil) }
            return (state.reader, state.offered)
        }
        reader?.resume(throwing: ChannelError.eof)
        offered?.taken.succeed()
    }

    /// Ends the body for the receiver (``end()``) and waits until the client's body has
    /// been read to its end, for at most `time`: true when it was, false when the time ran
    /// out (the pump then stops reading) or the body failed.
    func drained(within time: Duration) async -> Bool {
        end()
        let stop = eventLoop.scheduleTask(in: TimeAmount(time)) { self.stop() }
        let whole = (try? await whole.futureResult.get()) ?? false
        stop.cancel()
        return whole
    }

    /// What Vapor's `drain` hands over — on the request's event loop for a streamed body; at
    /// once, within `init`, for a body Vapor collected or an empty one: a buffer (the future
    /// returned completes once the receiver took it, or at once when it is dropped), or the
    /// body's end or failure.
    private func take(_ result: BodyStreamResult) -> EventLoopFuture<Void> {
        switch result {
        case .buffer(let buffer):
            return offer(buffer)
        case .end:
            finish(.success(()))
        case .error(let error):
            finish(.failure(error))
        }
        return eventLoop.makeSucceededVoidFuture()
    }

    /// Hands `buffer` to the receiver's read waiting, or keeps it until the receiver reads;
    /// drops it once the receiver is done with the body, and refuses it once the pump
    /// stopped reading.
    private func offer(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        enum Outcome {
            case refused, dropped, handed(CheckedContinuation<ByteBuffer?, any Error>), kept(EventLoopFuture<Void>)
        }
        let outcome: Outcome = state.withLockedValue { state in
            if state.stopped { return .refused }
            if state.ended { return .dropped }
            if let reader = state.reader {
                state.reader = nil
                return .handed(reader)
            }
            let taken = eventLoop.makePromise(of: Void.self)
            state.offered = (buffer, taken)
            return .kept(taken.futureResult)
        }
        switch outcome {
        case .refused:
            return eventLoop.makeFailedFuture(CancellationError())
        case .dropped:
            return eventLoop.makeSucceededVoidFuture()
        case .handed(let reader):
            reader.resume(returning: buffer)
            return eventLoop.makeSucceededVoidFuture()
        case .kept(let taken):
            return taken
        }
    }

    /// The body ended as `result` says: a read waiting gets its end (or its failure).
    private func finish(_ result: Result<Void, any Error>) {
        let (reader, settles) = state.withLockedValue { state in
            state.finished = result
            defer { (state.reader, state.settled) = (nil, true) }
            return (state.reader, !state.settled)
        }
        reader?.resume(with: result.map { nil })
        if settles { whole.succeed((try? result.get()) != nil) }
    }

    /// Stops reading the body: the next buffer Vapor hands over is refused, after which
    /// Vapor reads no more of it (the answer's end, failed by ``VaporReceiving``, then
    /// closes the connection). ``drained(within:)`` calls it after ``end()``, so no buffer
    /// waits for the receiver then.
    private func stop() {
        let settles = state.withLockedValue { state in
            state.stopped = true
            defer { state.settled = true }
            return !state.settled
        }
        if settles { whole.succeed(false) }
    }

    /// A pump let go of before its body ended (Vapor gave its body to another reader, or the
    /// request went away unread) completes what it still holds: NIO requires every promise
    /// to be completed.
    deinit {
        let (offered, settles) = state.withLockedValue { state in
            defer { (state.offered, state.settled) = (nil, true) }
            return (state.offered, !state.settled)
        }
        offered?.taken.succeed()
        if settles { whole.succeed(false) }
    }
}

/// A Vapor request's body as the receivers read it, through a ``VaporBodyPump``. Once its
/// reading is given up (the iterator let go of before the body's end), the pump reads and
/// drops the rest, as Vapor drains a body its handler did not read.
struct VaporRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    private let pump: @Sendable () -> VaporBodyPump

    /// The body `pump` reads.
    init(pump: VaporBodyPump) {
        self.pump = { pump }
    }

    /// `request`'s body, read from when it is first iterated.
    init(_ request: Request) {
        self.pump = { VaporBodyPump(request) }
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(reading: Reading(pump: pump()))
    }

    struct Iterator: AsyncIteratorProtocol {
        let reading: Reading

        mutating func next() async throws -> ByteBuffer? {
            try await reading.pump.next()
        }
    }

    /// One read of the body: ends it for the receiver when it is let go of.
    final class Reading: Sendable {
        let pump: VaporBodyPump

        init(pump: VaporBodyPump) {
            self.pump = pump
        }

        deinit {
            pump.end()
        }
    }
}
#endif
