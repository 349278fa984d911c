import Synchronization

/// The tus uploads being appended to now: a second append to one of them is refused (423)
/// instead of interleaving with the first.
final class TusLocks: Sendable {
    private let held = Mutex<Set<String>>([])

    /// Takes `id`; false when another request holds it.
    func acquire(_ id: String) -> Bool {
        held.withLock { $0.insert(id).inserted }
    }

    /// Gives `id` back.
    func release(_ id: String) {
        _ = held.withLock { $0.remove(id) }
    }
}
