#if os(macOS) || os(Linux)
import Foundation

/// Processes that spin on the CPU while a benchmark runs (`--busy N`): the machine of a
/// user whose client shares its cores with a proxy, a server or a build, where CPU per
/// byte decides speed. Each is `sh -c 'while :; do :; done'`, a process apart from the
/// client and from curl, stopped with SIGKILL. On macOS and Linux only, as `Process`.
struct BusyCores {
    private let processes: [Process]

    /// Starts `count` spinning processes (none for 0).
    init(count: Int) throws {
        var started: [Process] = []
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            try process.run()
            started.append(process)
        }
        processes = started
        if count > 0 { FileHandle.standardError.write(Data("\(count) spinning processes keep the cores busy\n".utf8)) }
    }

    /// Stops them.
    func stop() {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
#endif
