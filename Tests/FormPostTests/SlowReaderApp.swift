#if os(Linux)
import Foundation
import Testing

/// Which app ``SlowReaderApp`` runs, and on which port: handed to the child in its environment.
struct SlowReaderJob: Sendable {
    let adapter: ReceiverAdapter
    let port: Int

    private static let variable = "FORMPOST_SLOW_READER_APP"

    /// The job this process was started for, if it was.
    static var ofThisProcess: SlowReaderJob? {
        guard let text = ProcessInfo.processInfo.environment[variable] else { return nil }
        let fields = text.split(separator: " ").map(String.init)
        guard fields.count == 2, let adapter = ReceiverAdapter(rawValue: fields[0]), let port = Int(fields[1]) else { return nil }
        return SlowReaderJob(adapter: adapter, port: port)
    }

    /// Starts the tests' executable on ``SlowReaderApp`` alone, with this job; it serves
    /// until stopped.
    func start() throws -> ChildProcess {
        let testsExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).path
        return try ChildProcess("env", ["\(Self.variable)=\(adapter.rawValue) \(port)", testsExecutable, "--testing-library", "swift-testing",
                                        "--filter", "SlowReaderApp"], stdout: .discard, stderr: .inherit)
    }
}

/// The app of ``SlowReaderMemoryTests``: `POST /parts` answered by ``SlowPartsReader`` on
/// 127.0.0.1, on Hummingbird or on Vapor through FormPostVapor. Runs only in a process
/// started with a ``SlowReaderJob``, until it is stopped.
@Suite("A slow handler's memory: the app", .enabled(if: SlowReaderJob.ofThisProcess != nil))
struct SlowReaderApp {
    @Test("serves the slow handler until stopped")
    func serve() async throws {
        let job = try #require(SlowReaderJob.ofThisProcess)
        // Ends with the test process that started it, however that one ends.
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { sleep(1) }
            exit(1)
        }
        switch job.adapter {
        case .hummingbird: try await serveSlowReaderOnHummingbird(port: job.port)
        case .vapor: try await serveSlowReaderOnVapor(port: job.port)
        }
    }
}
#endif
