import Synchronization

/// The bytes that buffers of parts may hold at once in a receiver storing in object storage:
/// the files of forms and the appends of resumable uploads gather each part in memory (S3
/// takes no part under 5 MiB but the last) before it is sent. Past ``limit``, a file or an
/// append waits for memory before it takes more of its body (its client waits, as with a
/// slow store); a file or an append whose next buffer finds no room waits for its oldest
/// part in flight to be sent and gathers the next in that buffer, and while any waits, the
/// others keep one part in flight and give back the buffers beyond it as their next bytes
/// arrive. One budget is shared
/// by every receiver made with one ``ReceiverConfiguration``.
///
/// A single request always gets one part's buffer when no other holds memory, however small
/// the limit: a request never waits for itself.
public final class PartMemoryBudget: Sendable {
    /// The most bytes held at once.
    public let limit: Int

    private struct State {
        var held = 0
        /// The most bytes held at once so far.
        var peak = 0
        var waiting: [(id: Int, bytes: Int, resume: CheckedContinuation<Void, any Error>)] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// A budget of `limit` bytes.
    public init(limit: Int) {
        self.limit = limit
    }

    /// The bytes held now.
    public var held: Int { state.withLock { $0.held } }

    /// The most bytes held at once since the budget was made.
    public var peak: Int { state.withLock { $0.peak } }

    /// How many wait for memory now.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Takes `bytes`, waiting (first come, first served) until they fit under ``limit`` — or
    /// nothing else is held.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits (nothing taken).
    func take(_ bytes: Int) async throws {
        guard bytes > 0 else { return }
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case taken, waiting, cancelled }
                let outcome = state.withLock { state -> Outcome in
                    // Cancelled before it waits: the handler found nothing to end.
                    if Task.isCancelled { return .cancelled }
                    if state.waiting.isEmpty, Self.fits(bytes, in: state, limit: limit) {
                        Self.hold(bytes, in: &state)
                        return .taken
                    }
                    state.waiting.append((id, bytes, continuation))
                    return .waiting
                }
                switch outcome {
                case .taken: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            // Those behind it may fit now.
            let (cancelled, admitted) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<Void, any Error>]) in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return (nil, []) }
                return (state.waiting.remove(at: index).resume, Self.admitWaiting(in: &state, limit: limit))
            }
            cancelled?.resume(throwing: CancellationError())
            for continuation in admitted { continuation.resume() }
        }
    }

    /// Takes `bytes` if they fit under ``limit`` now (or nothing else is held) and no one
    /// waits; whether it did.
    func takeIfFree(_ bytes: Int) -> Bool {
        state.withLock { state in
            guard state.waiting.isEmpty, Self.fits(bytes, in: state, limit: limit) else { return false }
            Self.hold(bytes, in: &state)
            return true
        }
    }

    /// Gives back `bytes` taken before, and lets in those waiting that fit now, in order.
    func give(_ bytes: Int) {
        guard bytes > 0 else { return }
        let resumed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.held -= bytes
            return Self.admitWaiting(in: &state, limit: limit)
        }
        for continuation in resumed { continuation.resume() }
    }

    /// Takes, for those waiting, in order, what fits now; returns them, to be resumed.
    private static func admitWaiting(in state: inout State, limit: Int) -> [CheckedContinuation<Void, any Error>] {
        var admitted: [CheckedContinuation<Void, any Error>] = []
        while let first = state.waiting.first, fits(first.bytes, in: state, limit: limit) {
            state.waiting.removeFirst()
            hold(first.bytes, in: &state)
            admitted.append(first.resume)
        }
        return admitted
    }

    private static func fits(_ bytes: Int, in state: State, limit: Int) -> Bool {
        state.held == 0 || state.held + bytes <= limit
    }

    private static func hold(_ bytes: Int, in state: inout State) {
        state.held += bytes
        state.peak = max(state.peak, state.held)
    }
}
