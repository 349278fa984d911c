import Dispatch
import Synchronization

/// Counts sent bytes for a transport and calls a handler at most every `interval` seconds,
/// always when the count reaches the body's total (a stall watch learns from it that the
/// body is all sent), and once at completion. Restarting (a retry or redirect) counts from
/// zero again.
public final class ProgressReporter: Sendable {
    private struct State {
        var sent: Int64 = 0
        var lastReport: UInt64 = 0
        /// The count the last report carried.
        var lastReportedSent: Int64 = -1
        var finished = false
    }

    private let handler: (@Sendable (UploadProgress) -> Void)?
    private let total: Int64?
    private let intervalNanoseconds: UInt64
    private let state = Mutex(State())

    /// Creates a reporter for a body of `total` bytes that calls `handler` at most every `interval` seconds.
    public init(total: Int64?, interval: Double = 0.05, handler: (@Sendable (UploadProgress) -> Void)?) {
        self.total = total
        self.handler = handler
        self.intervalNanoseconds = UInt64(interval * 1e9)
    }

    /// The bytes counted so far.
    public var bytesSent: Int64 { state.withLock { $0.sent } }

    /// Starts counting from zero (the body is being sent again).
    public func restart() {
        state.withLock { $0.sent = 0 }
    }

    /// Counts `count` more bytes; reports if the interval has passed or the body is all sent.
    public func add(_ count: Int) {
        let report: UploadProgress? = state.withLock { state in
            state.sent += Int64(count)
            // Read under the lock: a time read before it could be older than one another
            // thread stored meanwhile.
            let now = DispatchTime.now().uptimeNanoseconds
            let allSent = total.map { state.sent >= $0 } ?? false
            guard allSent || (now >= state.lastReport && now - state.lastReport >= intervalNanoseconds) else { return nil }
            state.lastReport = now
            state.lastReportedSent = state.sent
            return UploadProgress(bytesSent: state.sent, totalBytes: total)
        }
        if let report { handler?(report) }
    }

    /// Reports the final figure once, unless the last report already carried it.
    public func finish() {
        let report: UploadProgress? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            guard state.lastReportedSent != state.sent else { return nil }
            state.lastReportedSent = state.sent
            return UploadProgress(bytesSent: state.sent, totalBytes: total)
        }
        if let report { handler?(report) }
    }
}
