import Foundation
import FormPost
import Testing

@Suite("Retry delays")
struct RetryPolicyTests {
    private let policy = RetryPolicy(maxRetries: 4, baseDelay: .milliseconds(250), maxDelay: .seconds(1))

    @Test("back-off doubles from the base delay up to the cap, and stops after the last retry")
    func backOff() {
        let delays = (1...5).map { policy.delay(attempt: $0, status: 503, retryAfter: nil) }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(1), nil])
    }

    @Test("Retry-After in seconds or as an HTTP date is followed, within the cap; other statuses are not retried")
    func retryAfter() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2026-11-22T12:00:00Z"))
        #expect(policy.delay(attempt: 1, status: 429, retryAfter: "0.5", now: now) == .milliseconds(500))
        #expect(policy.delay(attempt: 1, status: 503, retryAfter: "Sun, 22 Nov 2026 12:00:00 GMT", now: now) == .zero)
        #expect(policy.delay(attempt: 1, status: 503, retryAfter: "Sun, 22 Nov 2026 12:00:30 GMT", now: now) == .seconds(1))
        #expect(policy.delay(attempt: 1, status: 503, retryAfter: "-5", now: now) == .zero)
        #expect(policy.delay(attempt: 1, status: 500, retryAfter: "1", now: now) == nil)
    }

    @Test("Retry-After as an HTTP date in any of its three forms; a date that does not exist is no date")
    func retryAfterDateForms() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2026-11-22T12:00:00Z"))
        let patient = RetryPolicy(maxRetries: 1, baseDelay: .milliseconds(500), maxDelay: .seconds(3600))
        for value in ["Sun, 22 Nov 2026 12:00:30 GMT", "Sunday, 22-Nov-26 12:00:30 GMT", "Sun Nov 22 12:00:30 2026", " Sun, 22 Nov 2026 12:00:30 GMT\t"] {
            #expect(patient.delay(attempt: 1, status: 503, retryAfter: value, now: now) == .seconds(30), "Retry-After: \(value)")
        }
        #expect(patient.delay(attempt: 1, status: 503, retryAfter: "Mon, 01 Jan 2029 00:00:00 GMT", now: now) == .seconds(3600))
        // Not dates: the back-off applies.
        for value in ["Sun, 31 Feb 2026 12:00:00 GMT", "Sun, 22 Nov 2026 24:00:00 GMT", "Sun, 22 Foo 2026 12:00:00 GMT",
                      "Sun, 22 Nov 2026 12:00:00 CET", "22 Nov 2026", "Sun, 2 Nov 2026 12:00:00 GMT", ""] {
            #expect(patient.delay(attempt: 1, status: 503, retryAfter: value, now: now) == .milliseconds(500), "Retry-After: \(value)")
        }
    }

    @Test("absurd Retry-After values and attempts give the cap, never a trap")
    func absurdValues() {
        for value in ["1e30", "inf", "nan", "99999999999999999999"] {
            #expect(policy.delay(attempt: 1, status: 503, retryAfter: value) == .seconds(1), "Retry-After: \(value)")
        }
        let many = RetryPolicy(maxRetries: .max, baseDelay: .seconds(1), maxDelay: .seconds(30))
        #expect(many.delay(attempt: 10_000, status: nil, retryAfter: nil) == .seconds(30))
    }
}
