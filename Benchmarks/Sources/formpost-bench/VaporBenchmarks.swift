#if os(Linux)
import AsyncHTTPClient
import Foundation
import Multipart
import NIOCore

/// `formpost-bench vapor`: Vapor apps receiving forms, each a process of its own
/// (`receiver-apps`) restarted for every run so that its peak RSS is that run's:
/// - `formpost-vapor`: FormPostVapor (the body streamed to `UploadReceiver`);
/// - `vapor-collect`: Vapor's own `req.content.decode` of the collected body (multipart-kit),
///   the file written with `req.fileio` and hashed;
/// - `formpost-hummingbird`: FormPostServer's `UploadReceiver` on Hummingbird.
///
/// Rows: `vapor-1g`, one form with one file of `--size-mib` (1 GiB) sent by `curl -F`;
/// `vapor-small`, 2,000 forms of ten fields and a 4 KiB file, 16 at once through
/// AsyncHTTPClient. The servers take turns in every run; each answer is checked (the large
/// file's SHA-256, every small form's 200). A line per row: the median seconds, MB/s, CPU
/// seconds per GiB (the app's user and system time, from /proc) and peak RSS (VmHWM) of each
/// server, FormPostVapor's speed over each other's, its CPU per GiB over Hummingbird's, and
/// its peak RSS over Vapor's own.
struct VaporBenchmarks {
    let size: Int
    let runs: Int
    let directory: String
    static let servers = ["formpost-vapor", "vapor-collect", "formpost-hummingbird"]
    static let smallForms = 2_000

    struct ServerFigures: Encodable {
        let seconds: Double
        let mbps: Double
        let peak_rss_mib: Double
        let cpu_seconds_per_gib: Double
        let seconds_range: [Double]
    }

    struct Row: Encodable {
        let workload: String
        let bytes: Int64
        let runs: Int
        let servers: [String: ServerFigures]
        /// FormPostVapor's speed over Vapor's own, and over FormPostServer on Hummingbird.
        let speed_over_vapor_collect: Double
        let speed_over_hummingbird: Double
        /// FormPostVapor's CPU seconds per GiB over FormPostServer's on Hummingbird.
        let cpu_over_hummingbird: Double
        /// FormPostVapor's peak RSS over Vapor's own.
        let rss_over_vapor_collect: Double
    }

    func run() async throws {
        let large = directory + "/large.bin"
        try Filler.file(at: large, count: size)
        let expected = try Self.sha256(of: large)
        try await measure("vapor-1g", bytes: Int64(size)) { port in
            let answer = try Self.curl(["-s", "-F", "file=@\(large)", "http://127.0.0.1:\(port)/upload"])
            guard answer.contains(expected) else { throw BenchmarkFailure("the answer does not name the file's SHA-256: \(answer.prefix(300))") }
        }
        unlink(large)

        let small = directory + "/small.bin"
        try Filler.file(at: small, count: 4096)
        var form = MultipartForm()
        for index in 0..<10 { form.append(name: "field\(index)", value: "value of text field number \(index)") }
        try form.append(name: "file", fileAt: small)
        let plan = try form.plan()
        let body = try await plan.encodedBytes()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await measure("vapor-small", bytes: Int64(body.count * Self.smallForms)) { port in
                try await Self.sendSmall(body, contentType: plan.contentType, to: port, through: client)
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Runs `upload` against each server in turn, `runs` times after a warm-up, and prints the row.
    private func measure(_ workload: String, bytes: Int64, _ upload: @escaping (Int) async throws -> Void) async throws {
        var seconds: [String: [Double]] = [:], peaks: [String: [Double]] = [:], cpu: [String: [Double]] = [:]
        for run in 0...runs {
            for server in Self.servers {
                let stored = directory + "/stored-\(server)"
                try FileManager.default.createDirectory(atPath: stored, withIntermediateDirectories: true)
                let app = try ReceiverApp(mode: server, directory: stored)
                let started = ContinuousClock.now
                do {
                    try await upload(app.port)
                } catch {
                    app.stop()
                    throw BenchmarkFailure("\(workload) on \(server): \(error)")
                }
                let elapsed = ContinuousClock.now - started
                let peak = app.peakRSS()
                let spent = app.cpuSeconds()
                app.stop()
                try? FileManager.default.removeItem(atPath: stored)
                guard run > 0 else { continue }
                seconds[server, default: []].append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                peaks[server, default: []].append(Double(peak) / 1_048_576)
                cpu[server, default: []].append(spent / (Double(bytes) / Double(1 << 30)))
            }
        }
        var figures: [String: ServerFigures] = [:]
        for server in Self.servers {
            let times = seconds[server] ?? []
            let median = Measurement.median(times)
            figures[server] = ServerFigures(seconds: median, mbps: Double(bytes) / median / 1e6, peak_rss_mib: Measurement.median(peaks[server] ?? []),
                                            cpu_seconds_per_gib: Measurement.median(cpu[server] ?? []), seconds_range: [times.min() ?? 0, times.max() ?? 0])
        }
        let ours = figures["formpost-vapor"]!, collect = figures["vapor-collect"]!, hummingbird = figures["formpost-hummingbird"]!
        let row = Row(workload: workload, bytes: bytes, runs: runs, servers: figures, speed_over_vapor_collect: collect.seconds / ours.seconds,
                      speed_over_hummingbird: hummingbird.seconds / ours.seconds,
                      cpu_over_hummingbird: ours.cpu_seconds_per_gib / hummingbird.cpu_seconds_per_gib, rss_over_vapor_collect: ours.peak_rss_mib / collect.peak_rss_mib)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(row), as: UTF8.self))
    }

    /// Sends ``smallForms`` copies of `body`, 16 at once; each must be answered 200.
    private static func sendSmall(_ body: [UInt8], contentType: String, to port: Int, through client: HTTPClient) async throws {
        let buffer = ByteBuffer(bytes: body)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    for _ in stride(from: worker, to: smallForms, by: 16) {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/upload")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: contentType)
                        request.body = .bytes(buffer)
                        let response = try await client.execute(request, timeout: .seconds(60))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        guard response.status == .ok else { throw BenchmarkFailure("a small form was answered \(response.status)") }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    private static func curl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    private static func sha256(of path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }
}

/// One of `receiver-apps`' apps in a process of its own, on a free port, until ``stop()``.
struct ReceiverApp {
    let port: Int
    private let process: Process

    init(mode: String, directory: String) throws {
        port = LocalPorts.free()
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("receiver-apps")
        process.arguments = [mode, String(port), directory]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            try LocalPorts.waitForListener(port)
        } catch {
            process.terminate()
            throw error
        }
    }

    /// The process's peak resident set size so far (VmHWM), in bytes.
    func peakRSS() -> Int64 { ProcessFigures.peakRSS(process.processIdentifier) }

    /// The CPU seconds (user and system, all threads) the process has used so far.
    func cpuSeconds() -> Double { ProcessFigures.cpuSeconds(process.processIdentifier) }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
#endif
