import Synchronization

/// Lets no more requests to an origin go to AsyncHTTPClient at once than its pool serves at
/// once; the others wait here, first come first served, for as long as the uploads before
/// them take.
///
/// AsyncHTTPClient's pool makes at most `concurrentHTTP1ConnectionsPerHostSoftLimit`
/// connections to a host for requests not bound to an event loop, and a request it cannot
/// serve waits in its queue only as long as the connect timeout: past it, it fails with
/// `getConnectionFromPoolTimeout` although nothing is wrong but the uploads before it taking
/// longer. Waiting here has no such limit, and the request's own timeout starts when it
/// leaves.
///
/// An origin that answered over HTTP/2 serves ``http2Streams`` requests at once on one
/// connection; until one has, it is taken to speak HTTP/1.1.
final class ConnectionSlots: Sendable {
    /// Requests at once to an origin that speaks HTTP/2: RFC 9113 §6.5.2 recommends that a
    /// server allow no fewer than 100 concurrent streams.
    static let http2Streams = 100

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct OriginState {
        var taken = 0
        var speaksHTTP2 = false
        var waiters: [Waiter] = []
    }

    private struct State {
        var origins: [Origin: OriginState] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// Requests at once to an origin that speaks HTTP/1.1.
    let http1Connections: Int
    private let state = Mutex(State())

    /// Slots for a pool of `http1Connections` connections per host.
    init(http1Connections: Int) {
        self.http1Connections = max(1, http1Connections)
    }

    /// How many requests to `origin` may be under way at once.
    private func limit(_ origin: OriginState) -> Int {
        origin.speaksHTTP2 ? Self.http2Streams : http1Connections
    }

    /// Waits until a request to `origin` may go; call ``give(_:answeredOverHTTP2:)`` once
    /// its exchange is over, whatever its outcome.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    func take(_ origin: Origin) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter &+= 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    var entry = state.origins[origin] ?? OriginState()
                    defer { state.origins[origin] = entry }
                    if entry.waiters.isEmpty, entry.taken < limit(entry) {
                        entry.taken += 1
                        return .success(())
                    }
                    entry.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard var entry = state.origins[origin], let index = entry.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = entry.waiters.remove(at: index)
                state.origins[origin] = entry
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Gives back the slot a request to `origin` took, and lets the next ones waiting go;
    /// `answeredOverHTTP2` records which version the origin answered in, if it answered.
    func give(_ origin: Origin, answeredOverHTTP2: Bool?) {
        let released = state.withLock { state -> [Waiter] in
            guard var entry = state.origins[origin] else { return [] }
            entry.taken -= 1
            if let answeredOverHTTP2 { entry.speaksHTTP2 = answeredOverHTTP2 }
            var released: [Waiter] = []
            while entry.taken < limit(entry), !entry.waiters.isEmpty {
                released.append(entry.waiters.removeFirst())
                entry.taken += 1
            }
            state.origins[origin] = entry
            return released
        }
        for waiter in released { waiter.continuation.resume() }
    }

    /// How many requests to `origin` are under way and how many wait (for tests).
    func counts(_ origin: Origin) -> (underWay: Int, waiting: Int) {
        state.withLock { state in
            let entry = state.origins[origin] ?? OriginState()
            return (entry.taken, entry.waiters.count)
        }
    }
}
