import Synchronization

/// How far the store's clock is ahead of this machine's, as its answer to a request refused
/// for the time it was signed at (`RequestTimeTooSkewed`) showed: requests to the bucket are
/// signed with this machine's time plus the offset, as AWS's SDKs correct a skewed clock.
package final class S3ClockOffset: Sendable {
    private let offset = Mutex(Duration.zero)

    package init() {}

    /// The offset adopted (zero until a skew was seen).
    package var current: Duration { offset.withLock { $0 } }

    /// Adopts `offset` for the signatures to come.
    package func adopt(_ offset: Duration) {
        self.offset.withLock { $0 = offset }
    }

}
