#if os(macOS) || os(Linux)
import Foundation

/// This program's `sink` mode run as a child process: a receiver that reads and drops
/// what it is sent, on a port derived from this process's id, below Linux's ephemeral ports
/// (32768 and up), which the benchmarks' own connections take (nginx listens on the next
/// three); ready once started.
struct SinkProcess {
    let port: UInt16
    private let process: Process

    /// The sink, started, once it listens.
    static func launched() throws -> SinkProcess {
        let port = UInt16(12000 + Int(getpid() % 20000))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["sink", "\(port)"]
        let ready = Pipe()
        process.standardOutput = ready
        try process.run()
        _ = ready.fileHandleForReading.availableData
        return SinkProcess(port: port, process: process)
    }

    /// Stops the sink.
    func stop() {
        process.terminate()
    }
}
#endif
