import Multipart

/// Where the transport makes URLSession's calls that wait for a session's queue
/// (`URLSessionTask.cancel()`, `URLSession.invalidateAndCancel()`).
///
/// On Linux, FoundationNetworking makes them wait (`DispatchQueue.sync`) for the session's
/// queue, which a streamed body's read holds while it waits for the body's next bytes — and
/// producing those may need a thread of the Swift concurrency pool, which has one per core
/// and adds none while they block. Made on the pool (a task's cancellation handler, a
/// `defer` in async code) or on Dispatch's default threads (URLSession's delegate callbacks,
/// which share them), two such waits held every thread, and the process stopped for good.
/// So there they run on a thread of their own, and the caller goes on at once; elsewhere
/// they run where they are called.
enum SessionQueueCall {
    /// Runs `call`, off the calling thread on Linux.
    static func run(_ call: @escaping @Sendable () -> Void) {
        #if canImport(FoundationNetworking)
        if !DetachedThread.start(name: "formpost-urlsession", call) { call() }
        #else
        call()
        #endif
    }
}
