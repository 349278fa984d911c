import FormPost
import Dispatch
import Multipart
import Synchronization

/// A body plan's reader for a thread that may block — never a thread of Swift's
/// cooperative pool — which another thread can stop at any time.
///
/// Memory and file bytes are read on the calling thread. A stream part's bytes must be
/// awaited: a task reads them into memory of its own while the calling thread waits on a
/// semaphore, then they are copied out. ``cancel()`` cancels that task and wakes the
/// waiting thread at once, whether or not the stream part heeds cancellation; the
/// abandoned task's late bytes go nowhere.
///
/// ``read(into:)`` is called by one thread at a time; ``cancel()`` from any thread.
final class BlockingBodyReader: @unchecked Sendable {
    // @unchecked: `reader` is used by the reading thread, or by the task it waits for
    // (the semaphore orders the two), or — after a cancellation — by the abandoned task
    // alone; everything else is under `state`'s lock.
    private let reader: BodyChunkReader
    private let state = Mutex(State())

    private struct State {
        var cancelled = false
        /// The awaited read under way, if any.
        var inFlight: InFlight?
    }

    private struct InFlight {
        let task: Task<Void, Never>
        let wake: DispatchSemaphore
    }

    /// Creates a reader of `plan`, from its start, reading up to `chunkSize` bytes at a time
    /// from a stream part.
    init(plan: BodyPlan, chunkSize: Int) {
        reader = plan.makeChunkReader(chunkSize: chunkSize)
    }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Fills `target` with the body's next bytes, blocking while a stream part's bytes are
    /// awaited; returns the count, 0 at the end of the body.
    ///
    /// - Throws: the body's error (a `MultipartError`), or `CancellationError`
    ///   once ``cancel()`` was called.
    func read(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !target.isEmpty else { return 0 }
        if isCancelled { throw CancellationError() }
        let count = try reader.readWithoutSuspending(into: target)
        if count > 0 || reader.isFinished { return count }
        return try awaitRead(into: target)
    }

    /// Stops reading: a read waiting for a stream part returns at once (throwing
    /// `CancellationError`), and so does every later one.
    func cancel() {
        let inFlight = state.withLock { state -> InFlight? in
            state.cancelled = true
            return state.inFlight
        }
        inFlight?.task.cancel()
        inFlight?.wake.signal()
    }

    /// Awaits a stream part's next bytes on a task while the calling thread waits. The task
    /// prefers the blocking-I/O executor's threads to the Swift concurrency pool: the
    /// waiting thread is URLSession's, whose queue the pool's threads may themselves be
    /// waiting on (creating or cancelling a task), and on a 2-core machine the pool has two.
    private func awaitRead(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        let read = AwaitedRead(reader: reader, capacity: target.count)
        let wake = DispatchSemaphore(value: 0)
        let started = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            let task = Task(executorPreference: BlockingIOExecutor.shared) {
                await read.run()
                wake.signal()
            }
            state.inFlight = InFlight(task: task, wake: wake)
            return true
        }
        guard started else { throw CancellationError() }
        wake.wait()
        let cancelled = state.withLock { state -> Bool in
            state.inFlight = nil
            return state.cancelled
        }
        // Woken by cancel(): the read may still be under way, into its own memory.
        if cancelled { throw CancellationError() }
        return try read.copy(into: target)
    }

    /// One awaited read, performed by a task into memory of its own and handed over once
    /// complete (the waiting thread reads it only after the task signalled).
    private final class AwaitedRead: @unchecked Sendable {
        let reader: BodyChunkReader
        let scratch: UnsafeMutableRawBufferPointer
        var result: Result<Int, any Error>?

        init(reader: BodyChunkReader, capacity: Int) {
            self.reader = reader
            scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, capacity), alignment: 16)
        }

        deinit { scratch.deallocate() }

        func run() async {
            do {
                result = .success(try await reader.read(into: scratch))
            } catch {
                result = .failure(error)
            }
        }

        /// Copies what the completed read produced into `target`; returns the count.
        func copy(into target: UnsafeMutableRawBufferPointer) throws -> Int {
            guard let result else { throw CancellationError() }
            let produced = try result.get()
            let count = min(produced, target.count)
            if count > 0 {
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
            }
            return count
        }
    }
}
