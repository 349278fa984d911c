import FormPostReceiving
import ResumableHTTP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a request to the store is sent again, and after how long: AWS's *standard* retry
/// mode, as botocore 1.44 implements it. Sans-IO: it decides from a failure and the
/// attempt's number; the caller sleeps and sends.
///
/// - A request is sent again when the store was busy (429, or a throttling code such as
///   `SlowDown`), failed for a moment (500, 502, 503, 504, `InternalError`,
///   `RequestTimeout`, which S3 answers as a 400), or could not be reached.
/// - The pause before attempt *n* + 1 is a random part of 2^(*n* − 1) × 1 s after a
///   throttling answer, × 50 ms after another failure, at most 20 s (exponential backoff
///   with full jitter); or what the answer's `x-amz-retry-after` (milliseconds) or
///   `Retry-After` (seconds, or a date) asks when that is longer, by 5 s at most.
/// - A store whose clock is beyond a signature's reach (`RequestTimeTooSkewed`): its clock,
///   from the answer's `Date`, is adopted for the signatures (``S3ClockOffset``) and the
///   request is sent again at once.
/// - Each retry takes tokens from a quota the requests to one bucket share
///   (``S3RetryQuota``): when the store fails everything, retries stop within a few dozen
///   requests instead of multiplying its load.
package enum S3RetryStrategy {
    /// What to do after a failed attempt.
    package enum Decision: Equatable, Sendable {
        /// Give up: the failure is the request's.
        case fail
        /// Send the request again after `delay`; `isThrottling` when the store said it was
        /// busy (a retry that costs the quota less).
        case retry(after: Duration, isThrottling: Bool)
        /// Sign with the store's clock, `offset` ahead of the clock the refused request was
        /// signed with, and send again at once.
        case correctClock(offset: Duration)
    }

    /// The longest pause between two attempts.
    package static let maxBackoff: Duration = .seconds(20)

    /// How far the store's clock may be from the one a signature was made with before a
    /// skew error is taken for a clock to correct (S3 allows 15 minutes).
    package static let skewTolerance: Duration = .seconds(60)

    /// The codes with which a request is refused for the time it was signed at.
    package static let skewCodes: Set<String> = [
        "RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture", "InvalidSignatureException", "SignatureDoesNotMatch", "AuthFailure",
    ]

    /// What to do after attempt `attempt` (1 for the first) of at most `attempts` failed with
    /// `failure`, whose answer asked to wait `retryAfter` and was dated `serverDate`; the
    /// request was signed with the time `signedAt`. `random` is a number in 0..<1 (the jitter).
    package static func decide(after failure: ObjectStorageError, attempt: Int, of attempts: Int, retryAfter: Duration?,
                               serverDate: Date?, signedAt: Date, random: Double) -> Decision {
        guard attempt < attempts else { return .fail }
        // A refusal for the time signed at: by its code, or a 403 without one (a HEAD's answer has no body).
        if case .refused(_, let status, let code, _) = failure, code.map(skewCodes.contains) ?? (status == 403), let serverDate {
            let offset = serverDate.timeIntervalSince(signedAt)
            // A skew within the tolerance is no skew: the signature was refused for another reason.
            guard abs(offset) > Double(skewTolerance.components.seconds) else { return .fail }
            return .correctClock(offset: .milliseconds(Int64(offset * 1000)))
        }
        guard isRetryable(failure) else { return .fail }
        let throttling = isThrottling(failure)
        let exponent = min(attempt - 1, 30)
        let scale = throttling ? 1.0 : 0.05
        let ceiling = min(scale * Double(1 << exponent), Double(maxBackoff.components.seconds))
        var delay = Duration.milliseconds(Int64(ceiling * min(max(random, 0), 1) * 1000))
        if let retryAfter { delay = max(delay, min(retryAfter, delay + maxRetryAfterExtra)) }
        return .retry(after: delay, isThrottling: throttling)
    }

    /// The most a `Retry-After` lengthens the pause backoff chose.
    package static let maxRetryAfterExtra: Duration = .seconds(5)

    /// Whether the store said it was busy: 429, or a throttling code.
    package static func isThrottling(_ failure: ObjectStorageError) -> Bool {
        guard case .refused(_, let status, let code, _) = failure else { return false }
        return status == 429 || (code.map(ObjectStorageError.throttlingCodes.contains) ?? false)
    }

    /// Whether sending the same request again may succeed (`ObjectStorageError/isTransient`;
    /// credentials that could not be had were already tried again where they come from).
    package static func isRetryable(_ failure: ObjectStorageError) -> Bool {
        if case .credentialsUnavailable = failure { return false }
        return failure.isTransient
    }

    /// The pause an answer asks for: `x-amz-retry-after` in milliseconds, else `Retry-After`
    /// in seconds or as an HTTP date (after `now`).
    package static func retryAfter(milliseconds: String?, _ value: String?, now: Date) -> Duration? {
        if let milliseconds = milliseconds.flatMap({ Int64(S3Whitespace.trimmed($0)) }), milliseconds >= 0 {
            return .milliseconds(milliseconds)
        }
        return retryAfter(value, now: now)
    }

    /// The pause a `Retry-After` asks for: seconds, or an HTTP date (after `now`).
    package static func retryAfter(_ value: String?, now: Date) -> Duration? {
        guard let value = value.map(S3Whitespace.trimmed), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        guard let date = httpDate(value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }

    /// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, or its obsolete forms), as `Date` and
    /// `Retry-After` carry it: `HTTPDate`'s parse.
    package static func httpDate(_ text: String) -> Date? {
        HTTPDate.secondsSince1970(parsing: text).map(Date.init(timeIntervalSince1970:))
    }
}
