#if os(Linux)
import Foundation

/// `formpost-bench receive-vs-nginx`: `formpost serve --dir` (FORMPOST_BIN, a release
/// build) against nginx's upload offload (``NginxOffload``) on one load: `--clients` (16)
/// `curl -F` processes at once, each sending one file of `--size-mib` (64). The servers take
/// turns, which one goes first alternating; each round's answers are checked (every status
/// 200, every file stored whole), then its files removed and the page cache written back
/// (`sync`) outside the timing, so that neither server's writeback lands in the other's round.
///
/// Two lines:
/// - `receive-vs-nginx`: median seconds per round of each, `ratio` nginx's over ours (1:
///   as fast as nginx), and the CPU seconds (user and system, from /proc) of each server
///   per GiB received (nginx: its master and workers), with their peak RSS;
/// - `receive-memory-per-connection`: each server's resident set idle (before the first
///   round) and its peak over the rounds, and the difference divided by the clients.
struct ReceiveVsNginxBenchmarks {
    let size: Int
    let clients: Int
    let runs: Int
    let directory: String

    struct MemoryRow: Encodable {
        let workload = "receive-memory-per-connection"
        let clients: Int
        let idle_rss_mib: Double
        let peak_rss_mib: Double
        let mib_per_busy_connection: Double
        let reference = "nginx client_body_in_file_only (master and workers)"
        let reference_idle_rss_mib: Double
        let reference_peak_rss_mib: Double
        let reference_mib_per_busy_connection: Double
    }

    func run() async throws {
        guard let formpost = ProcessInfo.processInfo.environment["FORMPOST_BIN"] else { throw BenchmarkFailure("set FORMPOST_BIN to a release formpost") }
        let file = directory + "/body.bin"
        try Filler.file(at: file, count: size)
        let stored = directory + "/stored"
        try FileManager.default.createDirectory(atPath: stored, withIntermediateDirectories: true)
        let nginx = try NginxOffload(directory: directory)
        defer { nginx.stop() }
        let port = LocalPorts.free()
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: formpost)
        serve.arguments = ["serve", "--port", String(port), "--dir", stored]
        serve.standardOutput = FileHandle.nullDevice
        serve.standardError = FileHandle.nullDevice
        try serve.run()
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        try LocalPorts.waitForListener(port)
        usleep(500_000)
        let idle = (ours: ProcessFigures.residentRSS(serve.processIdentifier), theirs: nginx.processes.map(ProcessFigures.residentRSS).reduce(0, +))
        ProcessFigures.resetPeak(serve.processIdentifier)
        nginx.processes.forEach(ProcessFigures.resetPeak)

        let ourURL = "http://127.0.0.1:\(port)/", theirURL = "http://127.0.0.1:\(nginx.port)/upload"
        var times = (ours: [Double](), theirs: [Double]())
        var cpu = (ours: [Double](), theirs: [Double]())
        let gib = Double(size * clients) / Double(1 << 30)
        for run in -1..<runs {
            for oursFirst in run % 2 == 0 ? [true, false] : [false, true] {
                let pids = oursFirst ? [serve.processIdentifier] : nginx.processes
                let before = pids.map(ProcessFigures.cpuSeconds).reduce(0, +)
                let seconds = try round(file: file, url: oursFirst ? ourURL : theirURL)
                let spent = pids.map(ProcessFigures.cpuSeconds).reduce(0, +) - before
                try check(oursFirst ? stored : nginx.bodies)
                guard run >= 0 else { continue }
                if oursFirst {
                    times.ours.append(seconds)
                    cpu.ours.append(spent / gib)
                } else {
                    times.theirs.append(seconds)
                    cpu.theirs.append(spent / gib)
                }
            }
        }
        let peak = (ours: ProcessFigures.peakRSS(serve.processIdentifier), theirs: nginx.processes.map(ProcessFigures.peakRSS).reduce(0, +))
        BenchmarkResult(workload: "receive-vs-nginx", bytes: Int64(size * clients), ours: times.ours, reference: "nginx client_body_in_file_only",
                        theirs: times.theirs, peakRSS: peak.ours, referencePeakRSS: peak.theirs, cpu: cpu.ours, referenceCPU: cpu.theirs).printLine()
        let mib = 1_048_576.0
        let memory = MemoryRow(clients: clients, idle_rss_mib: Double(idle.ours) / mib, peak_rss_mib: Double(peak.ours) / mib,
                               mib_per_busy_connection: Double(peak.ours - idle.ours) / mib / Double(clients),
                               reference_idle_rss_mib: Double(idle.theirs) / mib, reference_peak_rss_mib: Double(peak.theirs) / mib,
                               reference_mib_per_busy_connection: Double(peak.theirs - idle.theirs) / mib / Double(clients))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(memory) + Data("\n".utf8))
    }

    /// One round: `clients` curl processes started at once, each sending `file` as a form to
    /// `url`; the seconds until the last has its answer. Every answer must be 200.
    private func round(file: String, url: String) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let transfers = try (0..<clients).map { _ -> (Process, Pipe) in
            let process = Process(), output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-F", "file=@\(file)", url]
            process.standardOutput = output
            try process.run()
            return (process, output)
        }
        let statuses = transfers.map { process, output in
            let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return status
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard statuses.allSatisfy({ $0 == "200" }) else { throw BenchmarkFailure("\(url) answered \(statuses)") }
        return seconds
    }

    /// Checks that `folder` holds one file per client, each at least the file's size (nginx
    /// keeps the whole form), removes them, and writes the page cache back.
    private func check(_ folder: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }
        let sizes = try names.map { try (FileManager.default.attributesOfItem(atPath: folder + "/" + $0)[.size] as? Int) ?? 0 }
        guard sizes.count == clients, sizes.allSatisfy({ $0 >= size }) else { throw BenchmarkFailure("\(folder) holds \(sizes) after a round") }
        for name in names { try FileManager.default.removeItem(atPath: folder + "/" + name) }
        sync()
    }
}
#endif
