#if Vapor
import FormPostReceiving
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// Reads a Vapor request's streamed body in one task for the whole request, handing each
/// buffer to the receiver as it asks for one (a buffer is read from Vapor only once the one
/// before was taken: Vapor's own backpressure holds). It also does what Vapor gives a
/// handler no other way to do: ending the body for the receiver alone (``end()``: its read
/// waiting throws as a cut connection's would, while the request's task goes on), and
/// reading and dropping what a client still sends once the receiver is done with the body,
/// so that Vapor reads the connection on (``drained(within:)``).
final class VaporBodyPump: Sendable {
    private struct State {
        /// The receiver's read waiting for a buffer.
        var reader: CheckedContinuation<ByteBuffer?, any Error>?
        /// A buffer read from Vapor, and the pump waiting for the receiver to take it.
        var offered: (buffer: ByteBuffer, taken: CheckedContinuation<Bool, Never>)?
        /// How the body ended, once it did (read to its end, or failed).
        var finished: Result<Void, any Error>?
        /// Whether the receiver is done with the body (``end()``): its reads throw.
        var ended = false
    }

    private let state = NIOLockedValueBox(State())
    /// The task reading the body: true once it read it to its end.
    private let reading = NIOLockedValueBox<Task<Bool, Never>?>(nil)

    /// Starts reading `body`.
    init(_ body: Request.Body) {
        let task = Task { await self.run(body) }
        reading.withLockedValue { $0 = task }
    }

    /// The body's next buffer, nil at its end; throws once ``end()`` was called, when the
    /// body failed, or when the calling task is cancelled.
    func next() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<ByteBuffer?, any Error>) in
                let outcome: (Result<ByteBuffer?, any Error>, CheckedContinuation<Bool, Never>?)? = state.withLockedValue { state in
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
                taken?.resume(returning: true)
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
        offered?.taken.resume(returning: false)
    }

    /// Ends the body for the receiver (``end()``) and waits until the client's body has
    /// been read to its end, for at most `time`: true when it was, false when the time ran
    /// out (the pump then stops reading) or the body failed.
    func drained(within time: Duration) async -> Bool {
        end()
        guard let task = reading.withLockedValue({ $0 }) else { return false }
        let stop = Task {
            try? await Task.sleep(for: time)
            task.cancel()
        }
        let whole = await task.value
        stop.cancel()
        return whole
    }

    /// Waits until the client's body has been read to its end, however long that takes,
    /// after ending it for the receiver (``end()``).
    func drained() async {
        end()
        _ = await reading.withLockedValue({ $0 })?.value
    }

    /// Reads `body` to its end, handing each buffer on while the receiver takes them, then
    /// dropping them: true when it ended whole, false when it failed or the task was
    /// cancelled first.
    private func run(_ body: Request.Body) async -> Bool {
        var handingOn = true
        do {
            for try await buffer in body {
                if handingOn { handingOn = await offer(buffer) }
                if Task.isCancelled { break }
            }
            if Task.isCancelled { throw CancellationError() }
            finish(.success(()))
            return true
        } catch {
            finish(.failure(error))
            return false
        }
    }

    /// Hands `buffer` to the receiver: true once it took it, false when it is done with the
    /// body.
    private func offer(_ buffer: ByteBuffer) async -> Bool {
        await withCheckedContinuation { (taken: CheckedContinuation<Bool, Never>) in
            let (reader, done): (CheckedContinuation<ByteBuffer?, any Error>?, Bool) = state.withLockedValue { state in
                if state.ended { return (nil, true) }
                if let reader = state.reader {
                    state.reader = nil
                    return (reader, false)
                }
                state.offered = (buffer, taken)
                return (nil, false)
            }
            if done {
                taken.resume(returning: false)
            } else if let reader {
                reader.resume(returning: buffer)
                taken.resume(returning: true)
            }
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
    }
}

/// A Vapor request's body as the receivers read it, through a ``VaporBodyPump``.
struct VaporRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let pump: VaporBodyPump

    func makeAsyncIterator() -> Iterator {
        Iterator(pump: pump)
    }

    struct Iterator: AsyncIteratorProtocol {
        let pump: VaporBodyPump

        mutating func next() async throws -> ByteBuffer? {
            try await pump.next()
        }
    }
}
#endif
