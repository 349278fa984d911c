#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with one condition, on POSIX threads: what `BlockingIOExecutor`'s threads wait
/// on, without Foundation's `NSCondition` (not in FoundationEssentials).
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Takes the lock.
    package func lock() { pthread_mutex_lock(mutex) }

    /// Gives the lock back.
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock.
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes one waiting thread.
    package func signal() { pthread_cond_signal(condition) }

    /// Gives the lock back while waiting for a signal, up to `seconds`, then takes it again.
    /// False when the time ran out (waiters recheck their state either way).
    package func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let whole = seconds.rounded(.down)
        deadline.tv_sec += Int(whole)
        deadline.tv_nsec += Int((seconds - whole) * 1_000_000_000)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }
}
