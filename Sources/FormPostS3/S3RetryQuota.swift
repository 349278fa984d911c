import Synchronization

/// The tokens the retries of requests to one bucket take, as AWS's standard retry mode
/// keeps them: 500 to begin with; a retry takes 5 (10 after a connection that failed or
/// timed out) and is not made when too few are left; a request that succeeds gives back
/// what its last retry took, or 1 when it needed none, up to the 500.
package final class S3RetryQuota: Sendable {
    /// The tokens at most, and at first.
    package static let capacity = 500
    /// What a retry takes.
    package static let retryCost = 5
    /// What a retry after a failed or timed-out connection takes.
    package static let timeoutRetryCost = 10

    private let tokens = Mutex(S3RetryQuota.capacity)

    package init() {}

    /// The tokens left.
    package var available: Int { tokens.withLock { $0 } }

    /// Takes the tokens for one retry; nil (taking none) when too few are left.
    package func takeRetry(afterTimeout: Bool) -> Int? {
        let cost = afterTimeout ? Self.timeoutRetryCost : Self.retryCost
        return tokens.withLock { tokens in
            guard tokens >= cost else { return nil }
            tokens -= cost
            return cost
        }
    }

    /// Records a request that succeeded, its last retry having taken `lastRetryCost`
    /// (nil when it was sent once).
    package func succeeded(lastRetryCost: Int?) {
        tokens.withLock { $0 = min(Self.capacity, $0 + (lastRetryCost ?? 1)) }
    }
}
