import FormPost
import Foundation
import Multipart
import Synchronization

/// Writes a body plan into a ``BodyStreamSink`` on a dedicated thread of its own — never a
/// thread of Swift's cooperative pool, since writes block until the reader makes room.
///
/// This is how URLSession gets a streamed body on Apple platforms: it reads the input end
/// of a bound stream pair while the pump writes into the output end (`StreamedUploadBody`).
///
/// The pump ends in one of four ways (``Outcome``):
/// - the whole body was written, and the sink closed (its reader sees the end);
/// - the body failed (a file changed size, a stream part yielded more or fewer bytes than
///   declared…): the FIRST error is kept in ``failure`` and handed to `onFailure`, so that
///   the transport can cancel its task; the sink is not closed, so its reader never takes
///   the cut body for a complete one;
/// - the sink took no more (its reader is gone);
/// - ``stop()`` was called from outside (the task ended or was cancelled): a wait for a
///   stream part's bytes ends at once; a write blocked in the sink ends when the sink's
///   reader goes away, which is the sink owner's to bring about.
final class BodyStreamPump: @unchecked Sendable {
    // @unchecked: `sink` and `reader`'s reads are used by the pump's thread only; the
    // rest is immutable or under `state`'s lock.

    /// How a pump ended.
    enum Outcome: Equatable, Sendable {
        /// The whole body was written and the sink closed.
        case delivered
        /// The body failed: see ``BodyStreamPump/failure``.
        case failed
        /// The sink took no more bytes.
        case refused
        /// ``BodyStreamPump/stop()`` was called.
        case stopped
    }

    /// The first error the body met, if any.
    let failure: BodyFailureRecord

    private let reader: BlockingBodyReader
    private let sink: any BodyStreamSink
    private let chunkSize: Int
    private let onFailure: @Sendable (any Error) -> Void
    private let state = Mutex(State())

    private struct State {
        var started = false
        var stopped = false
        var outcome: Outcome?
        var waiters: [CheckedContinuation<Outcome, Never>] = []
    }

    /// Creates a pump of `plan` into `sink`, reading `chunkSize` bytes at a time, that calls
    /// `onFailure` (on its thread) with the body's first error. Nothing happens before ``start()``.
    init(plan: BodyPlan, sink: any BodyStreamSink, chunkSize: Int = 256 * 1024, failure: BodyFailureRecord = BodyFailureRecord(),
         onFailure: @escaping @Sendable (any Error) -> Void) {
        reader = BlockingBodyReader(plan: plan, chunkSize: chunkSize)
        self.sink = sink
        self.chunkSize = max(1, chunkSize)
        self.failure = failure
        self.onFailure = onFailure
    }

    /// Starts writing on a new thread; a second call, or a call after ``stop()``, does nothing.
    func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        let thread = Thread { [self] in run() }
        thread.name = "FormPost body writer"
        thread.start()
    }

    /// Stops the pump from any thread: it writes nothing more and its thread ends (at once
    /// if it waits for a stream part's bytes; a blocked write ends when the sink's reader
    /// goes away). Not a failure: ``failure`` is left as it is, `onFailure` is not called.
    func stop() {
        let neverStarted = state.withLock { state -> Bool in
            state.stopped = true
            defer { state.started = true }
            return !state.started
        }
        reader.cancel()
        if neverStarted { finish(.stopped) }
    }

    /// How the pump ended, once it has.
    var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Waits until the pump has ended, and returns how.
    func finished() async -> Outcome {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state -> Outcome? in
                if state.outcome == nil { state.waiters.append(continuation) }
                return state.outcome
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// The pump's thread: reads the body and writes it until one of the ends.
    private func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        guard !isStopped else { return finish(.stopped) }
        sink.open()
        while true {
            let count: Int
            do {
                count = try reader.read(into: buffer)
            } catch {
                if isStopped { return finish(.stopped) }
                if failure.record(error) { onFailure(error) }
                return finish(.failed)
            }
            if count == 0 {
                sink.close()
                return finish(.delivered)
            }
            var written = 0
            while written < count {
                if isStopped { return finish(.stopped) }
                let taken = sink.write(UnsafeRawBufferPointer(rebasing: buffer[written..<count]))
                guard taken > 0 else { return finish(.refused) }
                written += min(taken, count - written)
            }
        }
    }

    private func finish(_ outcome: Outcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
