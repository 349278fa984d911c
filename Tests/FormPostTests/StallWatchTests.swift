import Foundation
@testable import FormPost
import Testing

/// Timed to a fraction of a second: `scripts/test` runs the suite in a process of its own,
/// where no other suite keeps the concurrency pool's threads busy.
@Suite("Stall watch")
struct StallWatchTests {
    @Test("requests that make no progress fail each after its own limit, many at once; one that progresses does not")
    func stallsAtTheirLimits() async throws {
        let limits: [Duration] = (0..<16).map { .milliseconds(200 + 25 * $0) }
        let clock = ContinuousClock()
        let outcomes = try await withThrowingTaskGroup(of: (Duration, Duration, Bool).self) { group in
            for limit in limits {
                group.addTask {
                    let watch = StallWatch(limit: limit, answerLimit: .seconds(30))
                    let started = clock.now
                    do {
                        _ = try await watch.run { () async throws -> Int in
                            try await Task.sleep(for: .seconds(30))
                            return 0
                        }
                        return (limit, started.duration(to: clock.now), false)
                    } catch is RequestStalled {
                        return (limit, started.duration(to: clock.now), true)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (limit, took, stalled) in outcomes {
            #expect(stalled, "limit \(limit)")
            #expect(took >= limit && took < limit + .seconds(2), "limit \(limit): failed after \(took)")
        }

        let watch = StallWatch(limit: .milliseconds(300), answerLimit: .seconds(30))
        let value = try await watch.run { () async throws -> Int in
            for _ in 0..<20 {
                try await Task.sleep(for: .milliseconds(50))
                watch.touch()
            }
            return 7
        }
        #expect(value == 7)
    }

    @Test("once the body is all sent, the answer has the answer limit, not the stall limit")
    func answerLimitAfterTheBody() async throws {
        let watch = StallWatch(limit: .milliseconds(200), answerLimit: .milliseconds(900))
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: RequestStalled.self) {
            _ = try await watch.run { () async throws -> Int in
                watch.touch(bodySent: true)
                try await Task.sleep(for: .seconds(30))
                return 0
            }
        }
        #expect(started.duration(to: clock.now) >= .milliseconds(900))
    }

    @Test("a cancelled task leaves the watch at once")
    func cancellation() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let task = Task {
            try await StallWatch(limit: .seconds(30), answerLimit: .seconds(30)).run { () async throws -> Int in
                try await Task.sleep(for: .seconds(30))
                return 0
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(started.duration(to: clock.now) < .seconds(5))
    }
}
