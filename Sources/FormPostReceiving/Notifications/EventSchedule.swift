/// When an event that failed is next offered, as ``UploadEventDelivery`` keeps it (in
/// `ID.retry` beside the event, so that a restart keeps it too): JSON
/// `{"attempts": 3, "firstFailure": 1795741954.7, "nextAttempt": 1795741961.2}`, times in
/// seconds since 1970.
public struct EventSchedule: Codable, Equatable, Sendable {
    /// The attempts made, all failed.
    public var attempts: Int
    /// When the first attempt failed.
    public var firstFailure: Double
    /// When the next attempt is due.
    public var nextAttempt: Double

    /// A schedule after `attempts` failed attempts, the first at `firstFailure`, the next
    /// due at `nextAttempt`.
    public init(attempts: Int, firstFailure: Double, nextAttempt: Double) {
        (self.attempts, self.firstFailure, self.nextAttempt) = (attempts, firstFailure, nextAttempt)
    }

    /// The schedule after one more attempt failed at `now` (`previous` nil: the first):
    /// the next is due after a delay that doubles from `first` up to `longest`, drawn at
    /// random between half of it and all of it, so that events that failed together are
    /// not all offered again together.
    static func after(_ previous: EventSchedule?, failedAt now: Double, first: Duration, longest: Duration) -> EventSchedule {
        let attempts = (previous?.attempts ?? 0) + 1
        let doubled = first.seconds * Double(1 << min(attempts - 1, 40))
        let delay = min(doubled, longest.seconds)
        return EventSchedule(attempts: attempts, firstFailure: previous?.firstFailure ?? now, nextAttempt: now + Double.random(in: (delay / 2)...delay))
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
