import Synchronization

/// The resumable uploads a request holds now, so that two requests never write to one
/// upload at once. tus refuses the second (423); the IETF draft's receiver ends the first
/// instead — a client that resumes has given up on it, though the server may not have
/// noticed its connection is gone — by ending its exchange (``ReceiverConnection/end()``), then
/// waits for it to let go. The receiver's own work in the background (a sweep taking up a
/// completion that failed, removing an idle upload) holds an upload briefly: a request
/// waits for it rather than being refused.
final class UploadLocks: Sendable {
    private struct Holder {
        let token: UInt64
        let connection: (any ReceiverConnection)?
        let background: Bool
    }

    private let held = Mutex<(next: UInt64, holders: [String: Holder])>((0, [:]))

    /// Takes `id` for a request on `connection`, or with `background` for the receiver's own
    /// work; nil when another holds it. Give it back with ``release(_:token:)``.
    func acquire(_ id: String, connection: (any ReceiverConnection)? = nil, background: Bool = false) -> UInt64? {
        held.withLock { state in
            guard state.holders[id] == nil else { return nil }
            state.next += 1
            state.holders[id] = Holder(token: state.next, connection: connection, background: background)
            return state.next
        }
    }

    /// Takes `id` for a request, waiting up to `patience` while the receiver's background
    /// work holds it; nil at once when a request holds it (tus answers 423), or when the
    /// background work held it longer.
    func acquireAfterBackground(_ id: String, patience: Duration = .seconds(10)) async -> UInt64? {
        let deadline = ContinuousClock.now + patience
        while true {
            if let token = acquire(id) { return token }
            let background = held.withLock { $0.holders[id]?.background ?? true }
            guard background, ContinuousClock.now < deadline, !Task.isCancelled else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Takes `id`, ending the request that holds it (``ReceiverConnection/end()``) and waiting
    /// up to `patience` for it to let go; nil when it did not (a holder whose connection is
    /// unknown).
    func acquireEndingHolder(_ id: String, connection: (any ReceiverConnection)?, patience: Duration = .seconds(5)) async -> UInt64? {
        let deadline = ContinuousClock.now + patience
        var ended = false
        while true {
            if let token = acquire(id, connection: connection) { return token }
            if !ended {
                ended = true
                let holder = held.withLock { $0.holders[id]?.connection }
                holder?.end()
            }
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Gives `id` back, if `token` still holds it.
    func release(_ id: String, token: UInt64) {
        held.withLock { state in
            if state.holders[id]?.token == token { state.holders[id] = nil }
        }
    }
}
