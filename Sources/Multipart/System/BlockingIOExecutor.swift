/// Where the encoders run their blocking file I/O: threads of their own, never the Swift
/// concurrency pool, whose few threads (one per core) every other task of the process needs.
/// A write to a full pipe, a read from a slow disk or a stalled network file system then
/// blocks one of these threads, not the process.
///
/// The threads are the executor's own rather than Dispatch's: a Dispatch queue shares its
/// threads with the Swift concurrency pool on Linux and adds one only when it notices the
/// others blocked, so blocked encoders would still starve other tasks there. A job finds an
/// idle thread or starts a new one, up to `maximumThreads` (then it waits for one); a thread
/// idle for `idleLifetime` ends.
///
/// Used through `withTaskExecutorPreference`, so the synchronous work of an encoder, and
/// the nonisolated async code it awaits, run here.
package final class BlockingIOExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor the encoders share.
    package static let shared = BlockingIOExecutor()

    /// The most threads running at once.
    let maximumThreads: Int
    /// How long a thread waits for a job before it ends, in seconds.
    let idleLifetime: Double

    // Guarded by `condition`.
    private let condition = ConditionLock()
    private var pending: [UnownedJob] = []
    private var nextPending = 0
    private var threads = 0
    private var idleThreads = 0

    init(maximumThreads: Int = 64, idleLifetime: Double = 10) {
        self.maximumThreads = maximumThreads
        self.idleLifetime = idleLifetime
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        pending.append(job)
        let startThread = idleThreads < pending.count - nextPending && threads < maximumThreads
        if startThread { threads += 1 }
        condition.signal()
        condition.unlock()
        if startThread, !DetachedThread.start(name: "multipart-io", { [self] in work() }) {
            // No thread now: the job waits for a running one, or for the next job's thread.
            condition.lock()
            threads -= 1
            condition.unlock()
        }
    }

    /// Runs `body` with this executor preferred, so its blocking calls stay off the pool.
    package static func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await withTaskExecutorPreference(shared) { try await body() }
    }

    /// A thread's life: the next job, or the end after `idleLifetime` without one.
    private func work() {
        while let job = nextJob() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func nextJob() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        while nextPending == pending.count {
            idleThreads += 1
            let signalled = condition.wait(seconds: idleLifetime)
            idleThreads -= 1
            if !signalled && nextPending == pending.count {
                threads -= 1
                return nil
            }
        }
        let job = pending[nextPending]
        nextPending += 1
        if nextPending == pending.count {
            pending.removeAll(keepingCapacity: true)
            nextPending = 0
        }
        return job
    }
}
