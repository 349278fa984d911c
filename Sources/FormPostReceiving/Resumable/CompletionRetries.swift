import Synchronization

/// The resumable uploads whose every byte is there while their completion failed (a full
/// disk, a failed write, a step that failed): a client that read their full offset takes
/// them for stored, so their completion is tried again — by the next request on them, at
/// start, and by each sweep (``UploadExpiry``) — until it succeeds.
final class CompletionRetries: Sendable {
    private let pending = Mutex<Set<String>>([])

    /// Notes that the completion of `id` must be tried again.
    func add(_ id: String) {
        _ = pending.withLock { $0.insert(id) }
    }

    /// Notes that `id` needs no completion again: it is stored, or gone.
    func remove(_ id: String) {
        _ = pending.withLock { $0.remove(id) }
    }

    /// Whether the completion of `id` must be tried again: its every byte is acknowledged,
    /// so it is never removed, however long its completion keeps failing.
    func contains(_ id: String) -> Bool {
        pending.withLock { $0.contains(id) }
    }

    /// The uploads whose completion must be tried again.
    var all: [String] {
        pending.withLock { Array($0) }
    }
}
