import Synchronization

/// A stream part's source that yields one chunk and then waits for bytes that never come,
/// as a live source with nothing more to say yet. It counts its iterations: how many were
/// made, how many have ended (their wait cancelled, or their iterator let go), and whether
/// one has waited for the bytes after the first chunk.
final class LiveStream: AsyncSequence, Sendable {
    typealias Element = [UInt8]

    private let state = Mutex<(made: Int, ended: Int, waited: Bool)>((0, 0, false))

    /// Whether an iteration has waited for the bytes after the first chunk.
    var hasWaited: Bool { state.withLock { $0.waited } }
    /// Whether every iteration made has ended.
    var allEnded: Bool { state.withLock { $0.ended == $0.made } }
    /// Iterations made, and those ended.
    var counts: (made: Int, ended: Int) { state.withLock { ($0.made, $0.ended) } }

    fileprivate func markMade() { state.withLock { $0.made += 1 } }
    fileprivate func markWaited() { state.withLock { $0.waited = true } }
    fileprivate func markEnded() { state.withLock { $0.ended += 1 } }

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
            lifetime.stream.markWaited()
            try? await Task.sleep(for: .seconds(3_600))
            lifetime.end()
            return nil
        }
    }

    /// One iteration: made with its iterator, ended once, when its wait is cancelled or its
    /// iterator goes.
    private final class Lifetime: Sendable {
        let stream: LiveStream
        private let ended = Mutex(false)

        init(stream: LiveStream) {
            self.stream = stream
            stream.markMade()
        }

        func end() {
            guard !ended.withLock({ ended in defer { ended = true }; return ended }) else { return }
            stream.markEnded()
        }

        deinit { end() }
    }
}
