import Synchronization

/// The tokens the retries of requests to one bucket take, as AWS's standard retry mode keeps
/// them (botocore 1.44's `RetryQuotaChecker`): 500 to begin with; a retry takes 14 (5 after
/// a throttling answer) and is not made when too few are left; a request that succeeds gives
/// back what its last retry took, or 1 when it needed none, up to the 500.
package final class S3RetryQuota: Sendable {
    /// The tokens at most, and at first.
    package static let capacity = 500
    /// What a retry takes.
    package static let retryCost = 14
    /// What a retry after a throttling answer (429, `SlowDown`, …) takes.
    package static let throttlingRetryCost = 5

    private let tokens = Mutex(S3RetryQuota.capacity)

    package init() {}

    /// The tokens left.
    package var available: Int { tokens.withLock { $0 } }

    /// Takes the tokens for one retry; nil (taking none) when too few are left.
    package func takeRetry(afterThrottling: Bool) -> Int? {
        let cost = afterThrottling ? Self.throttlingRetryCost : Self.retryCost
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
