import Dispatch
import FormPostServer
import Synchronization

/// A fault at one step of storing a complete resumable upload, as a receiver's
/// `completionFault`: the first time the step is reached, it fails it, or holds it until
/// ``release()`` (at most 60 s). Later completions pass, unless it fails always.
final class StepFault: Sendable {
    /// What happens the first time the step is reached.
    enum Action: Sendable {
        /// The step fails (the store throws).
        case fail
        /// The step waits for ``release()``.
        case hold
        /// The step fails every time it is reached, not the first time only.
        case failAlways
    }

    let step: CompletionStep
    let action: Action
    private let hits = Mutex(0)
    private let reached = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    init(_ action: Action, at step: CompletionStep) {
        self.step = step
        self.action = action
    }

    /// How often a completion reached the step.
    var count: Int { hits.withLock { $0 } }

    /// The hook to set as a receiver's `completionFault`.
    var hook: CompletionFault {
        { [self] step in try strike(at: step) }
    }

    /// Blocks until the step is held (at most 60 s); whether it was.
    func waitUntilHeld() -> Bool {
        reached.wait(timeout: .now() + 60) == .success
    }

    /// Lets the held step go on.
    func release() {
        released.signal()
    }

    private func strike(at reachedStep: CompletionStep) throws {
        guard reachedStep == step else { return }
        let hit = hits.withLock { $0 += 1; return $0 }
        if action == .failAlways { throw Failure() }
        guard hit == 1 else { return }
        switch action {
        case .fail, .failAlways:
            throw Failure()
        case .hold:
            reached.signal()
            _ = released.wait(timeout: .now() + 60)
        }
    }

    /// The failure of a step.
    struct Failure: Error {}
}
