import Synchronization

/// What one file or append holds of a ``PartMemoryBudget``: taken as its buffers grow, given
/// back all at once when it ends (when the last reference to it goes).
final class PartMemoryHold: Sendable {
    let budget: PartMemoryBudget
    private let bytes = Mutex(0)

    init(_ budget: PartMemoryBudget) {
        self.budget = budget
    }

    /// The bytes held.
    var held: Int { bytes.withLock { $0 } }

    /// Takes `count` more bytes, waiting for them (``PartMemoryBudget/take(_:)``).
    func take(_ count: Int) async throws {
        try await budget.take(count)
        bytes.withLock { $0 += count }
    }

    /// Takes `count` more bytes if they are free now; whether it did.
    func takeIfFree(_ count: Int) -> Bool {
        guard budget.takeIfFree(count) else { return false }
        bytes.withLock { $0 += count }
        return true
    }

    /// Gives back `count` of the bytes held.
    func give(_ count: Int) {
        bytes.withLock { $0 -= count }
        budget.give(count)
    }

    /// Gives back every byte held: its buffers are gone.
    func end() {
        give(held)
    }

    deinit {
        budget.give(bytes.withLock { $0 })
    }
}
