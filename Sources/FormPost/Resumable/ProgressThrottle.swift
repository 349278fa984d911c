import Synchronization

/// Passes on at most one progress report every ``interval``, and always the one that says
/// the body is all sent: for a request whose every written part is reported (so that its
/// ``StallWatch`` sees the body's end, which ``ProgressReporter`` may hold back), reported
/// to its caller as often as any other upload's progress.
final class ProgressThrottle: Sendable {
    /// The least time between two reports passed on, but the final one.
    let interval: Duration
    private let lastPassed = Mutex<ContinuousClock.Instant?>(nil)

    init(interval: Duration = .milliseconds(50)) {
        self.interval = interval
    }

    /// Whether a report passes: the first, one `interval` after the last that passed, or a `final` one.
    func passes(final: Bool) -> Bool {
        lastPassed.withLock { last in
            let now = ContinuousClock.now
            guard final || last.map({ $0.duration(to: now) >= interval }) ?? true else { return false }
            last = now
            return true
        }
    }
}
