#if Vapor
import FormPostReceiving
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// Reads a Vapor request's streamed body with Vapor's `drain` (not its `AsyncSequence`,
/// whose backpressure delegate can trap, vapor/vapor#3153), handing each buffer to the
/// receiver as it asks for one. At most ``readAhead`` buffers wait for the receiver: the
/// future the handler returns for the buffer that fills them completes only once the
/// receiver took one, and Vapor reads no more until then. The pump also does what Vapor
/// gives a handler no other way to do: ending the body for the receiver alone (``end()``:
/// its read waiting throws as a cut connection's would, while the request's task goes on),
/// and reading and dropping what a client still sends once the receiver is done with the
/// body, so that Vapor reads the connection on (``drained(within:)``).
final class VaporBodyPump: Sendable {
    private struct State {
        /// The receiver's read waiting for a buffer.
        var reader: CheckedContinuation<ByteBuffer?, any Error>?
        /// Buffers read from Vapor that the receiver has not taken yet, in order.
        var waiting = CircularBuffer<ByteBuffer>()
        /// The promise Vapor waits on before it reads on, while ``readAhead`` buffers wait.
        var held: EventLoopPromise<Void>?
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

    /// How many buffers read from Vapor may wait for the receiver: a few, so that Vapor's
    /// reads and the receiver's work overlap (one alone cost a fifth more CPU per GiB).
    static let readAhead = 4

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
                    if let buffer = state.waiting.popFirst() {
                        defer { state.held = nil }
                        return (.success(buffer), state.held)
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
        let (reader, held) = state.withLockedValue { state in
            state.ended = true
            state.waiting.removeAll()
            defer { (state.reader, state.held) = (nil, nil) }
            return (state.reader, state.held)
        }
        reader?.resume(throwing: ChannelError.eof)
        held?.succeed()
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

    /// Hands `buffer` to the receiver's read waiting, or keeps it until the receiver reads
    /// (the future returned completes at once while fewer than ``readAhead`` wait, else once
    /// the receiver took one); drops it once the receiver is done with the body, and refuses
    /// it once the pump stopped reading.
    private func offer(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        enum Outcome {
            case refused, readOn, handed(CheckedContinuation<ByteBuffer?, any Error>), held(EventLoopFuture<Void>)
        }
        let outcome: Outcome = state.withLockedValue { state in
            if state.stopped { return .refused }
            if state.ended { return .readOn }
            if let reader = state.reader {
                state.reader = nil
                return .handed(reader)
            }
            state.waiting.append(buffer)
            if state.waiting.count < Self.readAhead { return .readOn }
            let taken = eventLoop.makePromise(of: Void.self)
            state.held = taken
            return .held(taken.futureResult)
        }
        switch outcome {
        case .refused:
            return eventLoop.makeFailedFuture(CancellationError())
        case .readOn:
            return eventLoop.makeSucceededVoidFuture()
        case .handed(let reader):
            reader.resume(returning: buffer)
            return eventLoop.makeSucceededVoidFuture()
        case .held(let taken):
            return taken
        }
    }

    /// The body ended as `result` says: a read waiting gets its end (or its failure).
    private func finish(_ result: Result<Void, any Error>) {
        let reader = state.withLockedValue { state in
            state.finished = result
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(with: result.map { nil })
        settle((try? result.get()) != nil)
    }

    /// Completes ``whole`` with `read`, unless it was completed already.
    private func settle(_ read: Bool) {
        let first = state.withLockedValue { state in
            defer { state.settled = true }
            return !state.settled
        }
        if first { whole.succeed(read) }
    }

    /// Stops reading the body: the next buffer Vapor hands over is refused, after which
    /// Vapor reads no more of it (the answer's end, failed by ``VaporReceiving``, then
    /// closes the connection). ``drained(within:)`` calls it after ``end()``, so no buffer
    /// waits for the receiver then.
    private func stop() {
        state.withLockedValue { $0.stopped = true }
        settle(false)
    }

    /// A pump let go of before its body ended (Vapor gave its body to another reader, or the
    /// request went away unread) completes what it still holds: NIO requires every promise
    /// to be completed.
    deinit {
        let held = state.withLockedValue { state in
            defer { state.held = nil }
            return state.held
        }
        held?.succeed()
        settle(false)
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
