import Multipart

/// One thread that checks the ``StallWatch``es of every request in flight, each as often as
/// its ``StallWatch/checkInterval``, and fails a stalled request's wait. A request's watch
/// then costs a registration, instead of a timer of its own armed and cancelled on the
/// concurrency runtime's timer thread for every request.
///
/// The thread starts with the first watch and ends after ``idleLifetime`` without one.
final class StallTicker: @unchecked Sendable {
    // @unchecked: every stored var is read and written under `lock`.

    /// The process's ticker.
    static let shared = StallTicker()
    /// How long the thread outlives the last watch.
    static let idleLifetime: Duration = .seconds(10)

    private struct Waiter {
        let watch: StallWatch
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = ConditionLock()
    private var waiters: [UInt64: Waiter] = [:]
    private var nextID: UInt64 = 0
    private var threadRunning = false
    /// When the thread will next look, if it waits with a deadline.
    private var nextLook: ContinuousClock.Instant?

    /// Throws ``RequestStalled`` once `watch` has made no progress for its limit, or
    /// `CancellationError` once the task is cancelled. Returns — at once — only when no
    /// thread could be started: the caller then watches by itself.
    func waitForStall(of watch: StallWatch) async throws {
        let id = lock.withLock { () -> UInt64 in
            nextID &+= 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.lock()
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                if !threadRunning {
                    threadRunning = DetachedThread.start(name: "formpost-stall") { [self] in look() }
                    if !threadRunning {
                        lock.unlock()
                        continuation.resume()
                        return
                    }
                }
                waiters[id] = Waiter(watch: watch, continuation: continuation)
                if let nextLook, nextLook <= .now + watch.checkInterval {
                    // The thread looks soon enough.
                } else {
                    lock.signal()
                }
                lock.unlock()
            }
        } onCancel: {
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The thread's life: look at every watch, fail the stalled ones, wait for the next
    /// look; end after ``idleLifetime`` without a watch.
    private func look() {
        lock.lock()
        var idleSince: ContinuousClock.Instant?
        while true {
            let now = ContinuousClock.now
            var stalled: [(Waiter, RequestStalled)] = []
            var next: ContinuousClock.Instant?
            for (id, waiter) in waiters {
                if let stall = waiter.watch.stall(at: now) {
                    waiters[id] = nil
                    stalled.append((waiter, stall))
                } else {
                    let due = now + waiter.watch.checkInterval
                    next = next.map { min($0, due) } ?? due
                }
            }
            if !stalled.isEmpty {
                lock.unlock()
                for (waiter, stall) in stalled { waiter.continuation.resume(throwing: stall) }
                lock.lock()
                continue
            }
            if waiters.isEmpty {
                let since = idleSince ?? now
                idleSince = since
                if since.duration(to: now) >= Self.idleLifetime {
                    threadRunning = false
                    nextLook = nil
                    lock.unlock()
                    return
                }
                next = since + Self.idleLifetime
            } else {
                idleSince = nil
            }
            nextLook = next
            // At most a second at a time: the wait's deadline is on the wall clock, which may
            // be set back.
            _ = lock.wait(seconds: min(1, max(0.001, now.duration(to: next ?? now + Self.idleLifetime).inSeconds)))
            nextLook = nil
        }
    }
}
