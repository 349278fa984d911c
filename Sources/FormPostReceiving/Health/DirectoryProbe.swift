#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOPosix
import Synchronization

/// Whether files can be made in a directory, found out for real: a probe file is created
/// there (`O_CREAT | O_EXCL`) and removed again, on NIO's thread pool (never on an event
/// loop). The outcome is kept for `maxAge`, and probes asked for while one runs wait for
/// it, so that a flood of readiness checks costs one probe a `maxAge`.
final class DirectoryProbe: Sendable {
    /// The directory probed.
    let directory: String
    /// Object storage probed too (its bucket looked at), when the receiver stores there.
    let objectStorage: (any ObjectStore)?
    /// How long an outcome is answered again without a new probe.
    let maxAge: Duration
    private let state = Mutex(State())

    private struct State {
        var last: (at: ContinuousClock.Instant, problem: String?)?
        var running: Task<String?, Never>?
    }

    private enum Next {
        case known(String?)
        case wait(Task<String?, Never>)
    }

    /// The name every probe file begins with: hidden, as the receivers' own work files are.
    static let probePrefix = ".formpost-probe-"

    init(directory: String, objectStorage: (any ObjectStore)? = nil, maxAge: Duration) {
        self.directory = directory
        self.objectStorage = objectStorage
        self.maxAge = maxAge
    }

    /// Nil when a file can be made and removed in the directory; else why not, as a sentence.
    func problem() async -> String? {
        let next = state.withLock { state -> Next in
            if let last = state.last, ContinuousClock.now - last.at < maxAge { return .known(last.problem) }
            if let running = state.running { return .wait(running) }
            let running = Task { await self.probe() }
            state.running = running
            return .wait(running)
        }
        switch next {
        case .known(let problem): return problem
        case .wait(let task): return await task.value
        }
    }

    private func probe() async -> String? {
        let directory = self.directory
        var problem: String?
        do {
            problem = try await NIOThreadPool.singleton.runIfActive { Self.makeAndRemoveFile(in: directory) }
        } catch {
            problem = "the storage directory \(directory) could not be probed: \(error)"
        }
        if problem == nil, let objectStorage {
            problem = await objectStorage.problem()
        }
        state.withLock { $0 = State(last: (ContinuousClock.now, problem), running: nil) }
        return problem
    }

    /// Creates a new empty file in `directory` and removes it; nil when both worked.
    static func makeAndRemoveFile(in directory: String) -> String? {
        let path = directory + "/" + probePrefix + String(UInt64.random(in: .min ... .max), radix: 16)
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return "the storage directory \(directory) is not writable: \(String(cString: strerror(errno)))"
        }
        close(descriptor)
        guard unlink(path) == 0 else {
            return "a file made in the storage directory \(directory) could not be removed: \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
