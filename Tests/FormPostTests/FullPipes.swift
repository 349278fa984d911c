import Foundation
import Testing

/// Pipes that nobody reads for a while: more writers than the Swift concurrency pool has
/// threads each write into one (a pipe holds 64 KiB, so every write of more blocks), and a
/// probe task checks whether the pool could still run anything. The pipes are drained, on
/// threads of their own, once the probe has run or after `delay`, whichever comes first: a
/// test of code that does block the pool fails instead of hanging, and other tests keeping
/// the pool busy for a while only make the probe late.
struct FullPipes {
    /// What a run saw.
    struct Outcome {
        /// How long the probe task waited for a thread, from the writers' start.
        var probeWaited: Duration
        /// Whether the probe ran before the pipes were drained, while every writer was blocked.
        var probeRanWhileBlocked: Bool
        /// Whether every writer was still writing when the drain began.
        var writersWereBlocked: Bool
        /// What each pipe delivered, in order.
        var received: [[UInt8]]
    }

    let directory: String
    let writers = ProcessInfo.processInfo.activeProcessorCount + 2
    var delay: Duration = .seconds(30)

    /// Runs `write` once per pipe, each given its pipe's descriptor (open for reading and
    /// writing, so the open does not wait); each is expected to write `length` bytes.
    func run(length: Int, write: @escaping @Sendable (Int32) async throws -> Void) async throws -> Outcome {
        var pipes: [Int32] = []
        defer { for descriptor in pipes { close(descriptor) } }
        for index in 0..<writers {
            let fifo = directory + "/pipe-\(index)"
            try #require(mkfifo(fifo, 0o600) == 0)
            let descriptor = open(fifo, O_RDWR | O_CLOEXEC)
            try #require(descriptor >= 0)
            pipes.append(descriptor)
        }
        let started = ContinuousClock.now
        let drain = PipeDrain(descriptors: pipes, length: length, after: delay)
        let tasks = pipes.map { descriptor in
            Task {
                try await write(descriptor)
                return ContinuousClock.now
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let probe = await Task.detached {
            let now = ContinuousClock.now
            drain.start()
            return now
        }.value
        var finished: [ContinuousClock.Instant] = []
        for task in tasks { finished.append(try await task.value) }
        let received = drain.wait()
        return Outcome(probeWaited: probe - started, probeRanWhileBlocked: probe < drain.startedDraining,
                       writersWereBlocked: finished.allSatisfy { $0 > drain.startedDraining }, received: received)
    }
}

/// Reads each pipe to `length` bytes, every pipe on a thread of its own (a writer may only
/// get to its pipe once another's is drained), starting when told or after a delay.
private final class PipeDrain: @unchecked Sendable {
    private let group = DispatchGroup()
    private let trigger = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var received: [[UInt8]]
    private(set) var startedDraining = ContinuousClock.now

    init(descriptors: [Int32], length: Int, after delay: Duration) {
        received = Array(repeating: [], count: descriptors.count)
        let start = DispatchSemaphore(value: 0)
        for (index, descriptor) in descriptors.enumerated() {
            group.enter()
            Thread { [self] in
                start.wait()
                let bytes = Self.read(descriptor, length: length)
                lock.withLock { received[index] = bytes }
                group.leave()
            }.start()
        }
        Thread { [self] in
            _ = trigger.wait(timeout: .now() + .seconds(Int(delay.components.seconds)))
            startedDraining = ContinuousClock.now
            for _ in descriptors { start.signal() }
        }.start()
    }

    private static func read(_ descriptor: Int32, length: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var filled = 0
        while filled < length {
            let count = bytes.withUnsafeMutableBytes { POSIX.read(descriptor, $0.baseAddress! + filled, length - filled) }
            if count <= 0 { break }
            filled += count
        }
        return Array(bytes[0..<filled])
    }

    /// Drains the pipes now rather than at the deadline.
    func start() { trigger.signal() }

    /// Waits for the drain to end and returns what each pipe delivered.
    func wait() -> [[UInt8]] {
        group.wait()
        return lock.withLock { received }
    }
}
