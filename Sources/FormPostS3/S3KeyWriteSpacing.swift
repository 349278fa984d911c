import Synchronization

/// Writes to one key spaced at least ``interval`` apart, once the store has refused a write
/// with 429: Cloudflare R2 allows about one write per second to a key, and the lease's take,
/// release and take, or an upload's state saved twice, can otherwise land within a second.
/// Until a 429 is seen, writes are not held back (S3 has no such limit).
package final class S3KeyWriteSpacing: Sendable {
    /// The least time between two writes to one key.
    package static let interval: Duration = .seconds(1)

    private struct State {
        var enabled = false
        var lastWrite: [String: ContinuousClock.Instant] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether writes are being spaced.
    package var isEnabled: Bool { state.withLock { $0.enabled } }

    /// Spaces writes from now on (after a 429).
    package func enable() {
        state.withLock { $0.enabled = true }
    }

    /// How long a write to `key` waiting at `now` must wait for its turn, which is then
    /// taken: zero while writes are not spaced. Each write's moment is kept either way (for
    /// a second), so that the retry of the write a 429 refused waits a second after it.
    package func turn(for key: String, now: ContinuousClock.Instant = .now) -> Duration {
        state.withLock { state in
            if state.lastWrite.count > 4096 { state.lastWrite = state.lastWrite.filter { now - $0.value < Self.interval } }
            let at = state.enabled ? max(now, state.lastWrite[key].map { $0 + Self.interval } ?? now) : now
            state.lastWrite[key] = at
            return at - now
        }
    }
}
