import Synchronization

/// A stream part's source that yields one chunk and then waits for bytes that never come,
/// as a live source with nothing more to say yet: it records when an iterator is waiting,
/// and when the iteration ends (its wait cancelled, or its iterator let go).
final class LiveStream: AsyncSequence, Sendable {
    typealias Element = [UInt8]

    private let state = Mutex<(waiting: Bool, ended: Bool)>((false, false))

    /// Whether an iterator is waiting for the bytes after the first chunk.
    var isWaiting: Bool { state.withLock { $0.waiting } }
    /// Whether an iteration ended after it began: cancelled while it waited, or let go.
    var hasEnded: Bool { state.withLock { $0.ended } }

    fileprivate func markWaiting() { state.withLock { $0.waiting = true } }
    fileprivate func markEnded() { state.withLock { $0.ended = true } }

    func makeAsyncIterator() -> Iterator { Iterator(stream: self) }

    struct Iterator: AsyncIteratorProtocol {
        private let lifetime: Lifetime
        private var yielded = false

        init(stream: LiveStream) { lifetime = Lifetime(stream: stream) }

        mutating func next() async -> [UInt8]? {
            if !yielded {
                yielded = true
                return [UInt8](repeating: 7, count: 1_000)
            }
            lifetime.stream.markWaiting()
            try? await Task.sleep(for: .seconds(3_600))
            lifetime.stream.markEnded()
            return nil
        }
    }

    /// Marks the iteration ended when its iterator goes.
    private final class Lifetime: Sendable {
        let stream: LiveStream
        init(stream: LiveStream) { self.stream = stream }
        deinit { stream.markEnded() }
    }
}
