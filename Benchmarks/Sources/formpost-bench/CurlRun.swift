#if os(macOS) || os(Linux)
import Foundation

/// One run of `curl -s -o /dev/null` with `arguments`: the status, the HTTP version it
/// used (of its first transfer; ``transfers`` has each one's), its peak resident set size
/// and the CPU time it used. On macOS and Linux only: `posix_spawn` is unavailable on tvOS
/// and watchOS.
struct CurlRun {
    let status: String
    let httpVersion: String
    /// Each transfer's status and HTTP version, as `"200 2"`.
    let transfers: [String]
    let peakRSS: Int64
    /// User and system CPU seconds of the curl process (from `wait4`).
    let cpuSeconds: Double

    /// The options each transfer needs (curl resets them at `--next`): no progress meter,
    /// the body discarded, its status and HTTP version written out on a line.
    static let perTransfer = ["-s", "-o", "/dev/null", "-w", "%{http_code} %{http_version}\\n"]

    init(arguments: [String]) throws {
        var child: pid_t = 0
        let output = Pipe()
        #if os(macOS)
        var actions: posix_spawn_file_actions_t?
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, output.fileHandleForWriting.fileDescriptor, 1)
        let argv = ["curl"] + Self.perTransfer + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        // This process's environment, built from ProcessInfo: Swift sees no `environ` on Darwin.
        let environment: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environment.forEach { free($0) } }
        let spawned = posix_spawnp(&child, "curl", &actions, nil, &cArguments, environment)
        guard spawned == 0 else { throw BenchmarkFailure("cannot start curl: \(String(cString: strerror(spawned)))") }
        try output.fileHandleForWriting.close()
        // wait4's ru_maxrss would report this process's size (a child spawned with a shared
        // address space inherits it): sample the child's own high-water mark instead.
        var peak: Int64 = 0
        var status: Int32 = 0
        var usage = rusage()
        while true {
            peak = max(peak, Self.highWaterMark(of: child))
            let waited = wait4(child, &status, WNOHANG, &usage)
            if waited == child || (waited < 0 && errno != EINTR) { break }
            usleep(2_000)
        }
        peakRSS = peak
        cpuSeconds = CPUTime.seconds(usage)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        transfers = text.split(separator: "\n").map(String.init)
        let fields = (transfers.first ?? "").split(separator: " ")
        self.status = fields.first.map(String.init) ?? ""
        httpVersion = fields.dropFirst().first.map(String.init) ?? ""
    }

    /// `VmHWM` of a running curl, in bytes (0 before it runs curl's image, once it has exited,
    /// and off Linux, which has no `/proc`).
    private static func highWaterMark(of process: pid_t) -> Int64 {
        #if os(Linux)
        guard let name = try? String(contentsOfFile: "/proc/\(process)/comm", encoding: .utf8), name.hasPrefix("curl") else { return 0 }
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0) * 1024
        }
        #endif
        return 0
    }
}
#endif
