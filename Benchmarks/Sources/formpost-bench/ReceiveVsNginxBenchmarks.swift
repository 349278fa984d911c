#if os(Linux)
import Foundation

/// `formpost-bench receive-vs-nginx`: `formpost serve --dir` (FORMPOST_BIN, a release
/// build) against nginx's upload offload (``NginxOffload``) on one load: `--clients` (16)
/// `curl -F` processes at once, each sending one file of `--size-mib` (64). Two receivers
/// of formpost run: one with `--durability page-cache`, which like nginx leaves the files to
/// the kernel's writeback, and one with the default, `synced` (each file synced to the disk
/// before its receipt). The three take turns, in an order that rotates; each round's answers
/// are checked (every status 200, every file stored whole), then the page cache is written
/// back (`sync`, before the files are removed, so that the writeback of one round does not
/// land in the next) — outside the timing, and on no receiver's CPU.
///
/// Three lines:
/// - `receive-vs-nginx`: `formpost serve --durability page-cache` against nginx: median
///   seconds per round, `ratio` nginx's over ours (1: as fast as nginx), and the CPU seconds
///   (user and system, from /proc) per GiB received in `cpu_seconds` (nginx: its master and
///   workers), with their peak RSS;
/// - `receive-vs-nginx-synced`: the same for `formpost serve` as it runs by default;
/// - `receive-memory-per-connection`: the default receiver's resident set before any upload
///   and once settled after a warm-up round, its peak over the timed rounds, and the peak
///   above the settled figure divided by the clients; the same for nginx (the sum over its
///   processes).
struct ReceiveVsNginxBenchmarks {
    let size: Int
    let clients: Int
    let runs: Int
    let directory: String

    struct MemoryRow: Encodable {
        let workload = "receive-memory-per-connection"
        let clients: Int
        /// Before any upload: the warm-up's one-time growth is the difference to `idle_rss_mib`.
        let fresh_idle_rss_mib: Double
        let idle_rss_mib: Double
        let peak_rss_mib: Double
        let mib_per_busy_connection: Double
        let reference = "nginx client_body_in_file_only (master and workers)"
        let reference_idle_rss_mib: Double
        let reference_peak_rss_mib: Double
        let reference_mib_per_busy_connection: Double
    }

    /// One of the receivers compared: its processes, where uploads go, where they land.
    struct Contender {
        let processes: () -> [Int32]
        let url: String
        let folder: String
        var seconds: [Double] = []
        var cpuPerGiB: [Double] = []
    }

    /// `formpost serve` storing into `folder` with `flags`, on a free port, listening.
    private static func serve(_ formpost: String, folder: String, flags: [String]) throws -> (Process, Int) {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let port = LocalPorts.free()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: formpost)
        process.arguments = ["serve", "--port", String(port), "--dir", folder] + flags
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try LocalPorts.waitForListener(port)
        return (process, port)
    }

    func run() async throws {
        guard let formpost = ProcessInfo.processInfo.environment["FORMPOST_BIN"] else { throw BenchmarkFailure("set FORMPOST_BIN to a release formpost") }
        let file = directory + "/body.bin"
        try Filler.file(at: file, count: size)
        let nginx = try NginxOffload(directory: directory)
        defer { nginx.stop() }
        let (synced, syncedPort) = try Self.serve(formpost, folder: directory + "/synced", flags: [])
        let (pageCache, pageCachePort) = try Self.serve(formpost, folder: directory + "/page-cache", flags: ["--durability", "page-cache"])
        defer {
            for process in [synced, pageCache] {
                process.terminate()
                process.waitUntilExit()
            }
        }
        var contenders = [
            Contender(processes: { [pageCache.processIdentifier] }, url: "http://127.0.0.1:\(pageCachePort)/", folder: directory + "/page-cache"),
            Contender(processes: { [synced.processIdentifier] }, url: "http://127.0.0.1:\(syncedPort)/", folder: directory + "/synced"),
            Contender(processes: { nginx.processes }, url: "http://127.0.0.1:\(nginx.port)/upload", folder: nginx.bodies),
        ]
        let gib = Double(size * clients) / Double(1 << 30)
        usleep(500_000)
        let fresh = ProcessFigures.residentRSS(synced.processIdentifier)
        var idle: (ours: Int64, theirs: Int64) = (0, 0)
        for run in -1..<runs {
            for turn in 0..<contenders.count {
                let index = (turn + max(run, 0)) % contenders.count
                let pids = contenders[index].processes()
                let before = pids.map(ProcessFigures.cpuSeconds).reduce(0, +)
                let seconds = try round(file: file, url: contenders[index].url)
                let spent = pids.map(ProcessFigures.cpuSeconds).reduce(0, +) - before
                try check(contenders[index].folder)
                guard run >= 0 else { continue }
                contenders[index].seconds.append(seconds)
                contenders[index].cpuPerGiB.append(spent / gib)
            }
            if run == -1 {
                // Idle once the warm-up's one-time growth (threads, allocator arenas) is had.
                usleep(500_000)
                idle = (ProcessFigures.residentRSS(synced.processIdentifier), nginx.processes.map(ProcessFigures.residentRSS).reduce(0, +))
                ProcessFigures.resetPeak(synced.processIdentifier)
                ProcessFigures.resetPeak(pageCache.processIdentifier)
                nginx.processes.forEach(ProcessFigures.resetPeak)
            }
        }
        let peaks = contenders.map { $0.processes().map(ProcessFigures.peakRSS).reduce(0, +) }
        let reference = contenders[2]
        for (workload, index) in [("receive-vs-nginx", 0), ("receive-vs-nginx-synced", 1)] {
            BenchmarkResult(workload: workload, bytes: Int64(size * clients), ours: contenders[index].seconds, reference: "nginx client_body_in_file_only",
                            theirs: reference.seconds, peakRSS: peaks[index], referencePeakRSS: peaks[2], cpu: contenders[index].cpuPerGiB,
                            referenceCPU: reference.cpuPerGiB).printLine()
        }
        let mib = 1_048_576.0
        let memory = MemoryRow(clients: clients, fresh_idle_rss_mib: Double(fresh) / mib, idle_rss_mib: Double(idle.ours) / mib, peak_rss_mib: Double(peaks[1]) / mib,
                               mib_per_busy_connection: Double(peaks[1] - idle.ours) / mib / Double(clients),
                               reference_idle_rss_mib: Double(idle.theirs) / mib, reference_peak_rss_mib: Double(peaks[2]) / mib,
                               reference_mib_per_busy_connection: Double(peaks[2] - idle.theirs) / mib / Double(clients))
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
    /// keeps the whole form), writes the page cache back, then removes them.
    private func check(_ folder: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }
        let sizes = try names.map { try (FileManager.default.attributesOfItem(atPath: folder + "/" + $0)[.size] as? Int) ?? 0 }
        guard sizes.count == clients, sizes.allSatisfy({ $0 >= size }) else { throw BenchmarkFailure("\(folder) holds \(sizes) after a round") }
        sync()
        for name in names { try FileManager.default.removeItem(atPath: folder + "/" + name) }
    }
}
#endif
