import Synchronization

/// The resumable uploads a request holds now, so that two requests never write to one
/// upload at once. tus refuses the second (423); the IETF draft's receiver ends the first
/// instead — a client that resumes has given up on it, though the server may not have
/// noticed its connection is gone — by ending its exchange (``ReceiverConnection/end()``), then
/// waits for it to let go.
final class UploadLocks: Sendable {
    private struct Holder {
        let token: UInt64
        let connection: (any ReceiverConnection)?
    }

    private let held = Mutex<(next: UInt64, holders: [String: Holder])>((0, [:]))

    /// Takes `id` for a request on `connection`; nil when another request holds it. Give it
    /// back with ``release(_:token:)``.
    func acquire(_ id: String, connection: (any ReceiverConnection)? = nil) -> UInt64? {
        held.withLock { state in
            guard state.holders[id] == nil else { return nil }
            state.next += 1
            state.holders[id] = Holder(token: state.next, connection: connection)
            return state.next
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
