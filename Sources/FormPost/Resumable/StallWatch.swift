import Synchronization

/// Fails a request that makes no progress for ``limit``: no byte of its body sent and no
/// answer. A server that stops reading, or a connection that died without a reset, then
/// counts as a failed request (the upload asks for the offset and goes on) instead of
/// holding the upload forever. Once the whole body is sent, the answer may take
/// ``answerLimit``: a server may have much to do with the last bytes of an upload (parse a
/// whole form), and one that accepts a request and never answers it is given up on then.
final class StallWatch: Sendable {
    /// How long a request may make no progress while its body is sent.
    let limit: Duration
    /// How long the answer may take once the body is all sent.
    let answerLimit: Duration
    private let state = Mutex((lastProgress: ContinuousClock.now, bodySent: false))

    init(limit: Duration, answerLimit: Duration) {
        self.limit = limit
        self.answerLimit = answerLimit
    }

    /// Notes progress: the stall's clock starts again; `bodySent` once the body is all sent.
    func touch(bodySent: Bool = false) {
        state.withLock { $0 = (.now, $0.bodySent || bodySent) }
    }

    /// How often the watch is looked at: a quarter of its shorter limit, at least every second.
    var checkInterval: Duration { min(limit / 4, answerLimit / 4, .seconds(1)) }

    /// The stall `now` finds, if the request has made no progress for its limit.
    func stall(at now: ContinuousClock.Instant) -> RequestStalled? {
        let (last, bodySent) = state.withLock { $0 }
        let limit = bodySent ? answerLimit : limit
        return last.duration(to: now) >= limit ? RequestStalled(limit: limit, bodySent: bodySent) : nil
    }

    /// Runs `operation`; throws ``RequestStalled`` (and cancels it) once it has made no
    /// progress for ``limit``. ``StallTicker``'s thread looks at the watch; where no thread
    /// can be started, a task of its own does.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        touch()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await StallTicker.shared.waitForStall(of: self)
                // No thread could be started for the ticker.
                while true {
                    try await Task.sleep(for: self.checkInterval)
                    if let stall = self.stall(at: .now) { throw stall }
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw CancellationError()
        }
    }
}

/// A request that made no progress for `limit`: while its body was sent, or, once it was
/// all sent, no answer came.
struct RequestStalled: Error, CustomStringConvertible {
    let limit: Duration
    let bodySent: Bool
    var description: String {
        bodySent ? "no answer came within \(limit) of the request's end" : "the request made no progress for \(limit)"
    }
}
