#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ResumableHTTP

/// When a request is sent again: after a connection failure before any response, and on
/// 503 or 429, waiting as `Retry-After` says (seconds or an HTTP date) or backing off.
public struct RetryPolicy: Sendable, Equatable {
    /// How many times a request may be re-sent.
    public var maxRetries: Int
    /// The first back-off delay; it doubles each retry.
    public var baseDelay: Duration
    /// The longest wait, whatever `Retry-After` asks.
    public var maxDelay: Duration

    /// No retries (the default).
    public static let none = RetryPolicy(maxRetries: 0)

    /// Creates a policy.
    public init(maxRetries: Int, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(30)) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The delay before retry number `attempt` (from 1) after a response with `status` and
    /// `retryAfter`, or nil when it must not be retried.
    public func delay(attempt: Int, status: Int?, retryAfter: String?, now: Date = Date()) -> Duration? {
        guard attempt <= maxRetries else { return nil }
        if let status, status != 503, status != 429 { return nil }
        if let retryAfter, let seconds = Self.parseRetryAfter(retryAfter, now: now) {
            return seconds.isFinite ? .seconds(min(max(0, seconds), maxDelay.inSeconds)) : maxDelay
        }
        return .seconds(min(baseDelay.inSeconds * Double(sign: .plus, exponent: attempt - 1, significand: 1), maxDelay.inSeconds))
    }

    /// Seconds from a `Retry-After` value: delta-seconds or an HTTP date.
    static func parseRetryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingOptionalWhitespace()
        if let seconds = Double(trimmed) { return seconds }
        return HTTPDate.secondsSince1970(parsing: trimmed).map { $0 - now.timeIntervalSince1970 }
    }
}
