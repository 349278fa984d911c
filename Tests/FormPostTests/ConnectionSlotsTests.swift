import Foundation
@testable import FormPost
import Synchronization
import Testing

/// ``ConnectionSlots`` lets requests to an origin go as AsyncHTTPClient's pool can serve
/// them: the first come first, a cancelled waiter leaves at once without taking a slot, and
/// an origin that answered over HTTP/2 takes many at once.
@Suite("Connection slots")
struct ConnectionSlotsTests {
    let origin = Origin(URL(string: "http://127.0.0.1:8080/upload")!)
    let other = Origin(URL(string: "http://127.0.0.1:8081/upload")!)

    @Test("past the limit requests wait, and go in the order they came")
    func waitersGoInOrder() async throws {
        let slots = ConnectionSlots(http1Connections: 2)
        try await slots.take(origin)
        try await slots.take(origin)
        try await slots.take(other)
        let order = OrderLog()
        var waiting: [Task<Void, any Error>] = []
        for index in 0..<3 {
            waiting.append(Task {
                try await slots.take(origin)
                order.append(index)
            })
            try await waitUntil { slots.counts(origin).waiting == index + 1 }
        }
        #expect(counts(slots, origin) == [2, 3])
        #expect(order.values.isEmpty)
        slots.give(origin, answeredOverHTTP2: false)
        try await waiting[0].value
        slots.give(origin, answeredOverHTTP2: nil)
        try await waiting[1].value
        #expect(order.values == [0, 1])
        #expect(counts(slots, origin) == [2, 1])
        slots.give(origin, answeredOverHTTP2: false)
        try await waiting[2].value
        #expect(order.values == [0, 1, 2])
        #expect(counts(slots, other) == [1, 0])
    }

    @Test("a waiter cancelled leaves without a slot")
    func cancelledWaiterLeaves() async throws {
        let slots = ConnectionSlots(http1Connections: 1)
        try await slots.take(origin)
        let waiter = Task { try await slots.take(origin) }
        try await waitUntil { slots.counts(origin).waiting == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(counts(slots, origin) == [1, 0])
        slots.give(origin, answeredOverHTTP2: nil)
        #expect(counts(slots, origin) == [0, 0])
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await slots.take(origin)
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        #expect(counts(slots, origin) == [0, 0])
    }

    @Test("an origin that answered over HTTP/2 takes 100 requests at once")
    func http2OriginTakesMany() async throws {
        let slots = ConnectionSlots(http1Connections: 2)
        try await slots.take(origin)
        try await slots.take(origin)
        let waiters = (0..<150).map { _ in Task { try await slots.take(origin) } }
        try await waitUntil { slots.counts(origin).waiting == 150 }
        slots.give(origin, answeredOverHTTP2: true)
        try await waitUntil { counts(slots, origin) == [100, 51] }
        for waiter in waiters { waiter.cancel() }
        var went = 0
        for waiter in waiters where (try? await waiter.value) != nil { went += 1 }
        #expect(went == 99)
        #expect(counts(slots, origin) == [100, 0])
    }

    /// How many requests to `origin` are under way and how many wait.
    private func counts(_ slots: ConnectionSlots, _ origin: Origin) -> [Int] {
        let counts = slots.counts(origin)
        return [counts.underWay, counts.waiting]
    }

    /// Polls `condition` for up to 10 s.
    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }
}

/// The order in which waiters got their slots.
private final class OrderLog: Sendable {
    private let log = Mutex<[Int]>([])
    func append(_ value: Int) { log.withLock { $0.append(value) } }
    var values: [Int] { log.withLock { $0 } }
}
