import Dispatch

/// Where the encoders run their blocking file I/O: threads of their own (a concurrent
/// Dispatch queue), never the Swift concurrency pool, whose few threads (one per core)
/// every other task of the process needs. A write to a full pipe, a read from a slow disk
/// or a stalled network file system then blocks one of these threads, not the process.
///
/// Used through `withTaskExecutorPreference`, so the synchronous work of an encoder, and
/// the nonisolated async code it awaits, run here.
final class BlockingIOExecutor: TaskExecutor, Sendable {
    /// The executor the encoders share.
    static let shared = BlockingIOExecutor()

    private let queue = DispatchQueue(label: "Multipart.blocking-io", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `body` with this executor preferred, so its blocking calls stay off the pool.
    static func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await withTaskExecutorPreference(shared) { try await body() }
    }
}
