import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormPost
import FormPostServer
import Logging
import Multipart
import Testing

/// Runs an ``UploadServer`` storing into `directory` with `health` (none when nil), and
/// `body` with its base URL (`http://127.0.0.1:PORT`).
func withHealthServer<T: Sendable>(directory: String, health: ServerHealth?, _ body: @Sendable (URL) async throws -> T) async throws -> T {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory), logger: logger)
    let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, health: health)
    return try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
        try await body(URL(string: "http://127.0.0.1:\(port)")!)
    }
}

/// `GET /healthz` and `GET /readyz` of ``ServerHealth``: alive, and ready only while the
/// storage directory takes a new file and the server is not stopping.
@Suite("Health endpoints")
struct HealthEndpointTests {
    let client = FormPostClient()

    /// What `/readyz` answers with a 503: the status alone, nothing of why.
    static let unavailable = #"{"status":"unavailable"}"#

    /// The reasons `log` was told for not being ready.
    static func reasons(in log: CapturedLog) -> [String] {
        log.entries.filter { $0.level == .warning && $0.message.hasPrefix("not ready: ") }.map(\.message)
    }

    @Test("/healthz and /readyz answer 200 {\"status\":\"ok\"} (HEAD: the head alone), not cached; the probe leaves no file behind; without health endpoints both go to the receiver (405)")
    func bothAnswerOK() async throws {
        let storage = try SampleDirectory()
        let (live, ready, head) = try await withHealthServer(directory: storage.path, health: ServerHealth(directory: storage.path)) { base in
            (try await client.send(nil, to: base.appendingPathComponent("healthz"), method: .get),
             try await client.send(nil, to: base.appendingPathComponent("readyz"), method: .get),
             try await client.send(nil, to: base.appendingPathComponent("readyz"), method: .head))
        }
        #expect(live.status == 200 && String(decoding: live.body, as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(ready.status == 200 && String(decoding: ready.body, as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(ready.header("Cache-Control") == "no-store" && ready.header("Content-Type") == "application/json")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "15")
        #expect(try FileManager.default.contentsOfDirectory(atPath: storage.path).isEmpty, "the probe left a file")
        let off = try await withHealthServer(directory: storage.path, health: nil) { base in
            try await client.send(nil, to: base.appendingPathComponent("readyz"), method: .get)
        }
        #expect(off.status == 405)
    }

    @Test("/readyz answers 503 once the storage directory is gone, telling the log why and the client nothing of it, and 200 again once it is back; /healthz stays 200")
    func removedDirectoryIsNotReady() async throws {
        let sample = try SampleDirectory()
        let storage = sample.path + "/uploads"
        let log = CapturedLog()
        let health = ServerHealth(directory: storage, probeInterval: .zero, logger: log.logger)
        let (before, gone, alive, back) = try await withHealthServer(directory: storage, health: health) { base in
            let ready = base.appendingPathComponent("readyz")
            let before = try await client.send(nil, to: ready, method: .get)
            try FileManager.default.removeItem(atPath: storage)
            let gone = try await client.send(nil, to: ready, method: .get)
            let alive = try await client.send(nil, to: base.appendingPathComponent("healthz"), method: .get)
            try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
            return (before, gone, alive, try await client.send(nil, to: ready, method: .get))
        }
        #expect(before.status == 200)
        #expect(gone.status == 503)
        #expect(String(decoding: gone.body, as: UTF8.self) == Self.unavailable)
        let reasons = Self.reasons(in: log)
        #expect(reasons.count == 1 && reasons[0].contains("\(storage) is not writable"), "\(reasons)")
        #expect(log.entries.contains { $0.message == "ready again" })
        #expect(alive.status == 200)
        #expect(back.status == 200)
    }

    @Test("a probe's outcome is kept for the probe interval: with an hour's, the directory removed after the first probe is not noticed")
    func outcomeIsCached() async throws {
        let sample = try SampleDirectory()
        let storage = sample.path + "/uploads"
        let (first, second) = try await withHealthServer(directory: storage, health: ServerHealth(directory: storage, probeInterval: .seconds(3600))) { base in
            let ready = base.appendingPathComponent("readyz")
            let first = try await client.send(nil, to: ready, method: .get)
            try FileManager.default.removeItem(atPath: storage)
            return (first, try await client.send(nil, to: ready, method: .get))
        }
        #expect(first.status == 200 && second.status == 200)
    }

    #if os(Linux)
    @Test("/readyz answers 503 while the storage's file system is read-only (a tmpfs remounted so: root is refused too), 200 once writable again")
    func readOnlyFileSystemIsNotReady() async throws {
        let disk = try TmpfsMount(kibibytes: 1024)
        let log = CapturedLog()
        let health = ServerHealth(directory: disk.path, probeInterval: .zero, logger: log.logger)
        let (before, readOnly, writable) = try await withHealthServer(directory: disk.path, health: health) { base in
            let ready = base.appendingPathComponent("readyz")
            let before = try await client.send(nil, to: ready, method: .get)
            try disk.remount(readOnly: true)
            let readOnly = try await client.send(nil, to: ready, method: .get)
            try disk.remount(readOnly: false)
            return (before, readOnly, try await client.send(nil, to: ready, method: .get))
        }
        #expect(before.status == 200)
        #expect(readOnly.status == 503)
        #expect(String(decoding: readOnly.body, as: UTF8.self) == Self.unavailable)
        #expect(Self.reasons(in: log).contains { $0.contains("Read-only file system") }, "\(Self.reasons(in: log))")
        #expect(writable.status == 200)
    }
    #endif

    @Test("once the server begins to stop, /readyz answers 503 \"the server is stopping\" while /healthz and uploads are still answered")
    func stoppingIsNotReady() async throws {
        let storage = try SampleDirectory()
        let log = CapturedLog()
        let health = ServerHealth(directory: storage.path, logger: log.logger)
        let (before, stopping, alive, upload) = try await withHealthServer(directory: storage.path, health: health) { base in
            let ready = base.appendingPathComponent("readyz")
            let before = try await client.send(nil, to: ready, method: .get)
            health.beginStopping()
            var form = MultipartForm()
            form.append(name: "f", bytes: Array("still taken".utf8), filename: "f.txt")
            return (before, try await client.send(nil, to: ready, method: .get), try await client.send(nil, to: base.appendingPathComponent("healthz"), method: .get),
                    try await client.upload(form, to: base.appendingPathComponent("upload")))
        }
        #expect(before.status == 200)
        #expect(stopping.status == 503)
        #expect(String(decoding: stopping.body, as: UTF8.self) == Self.unavailable)
        #expect(Self.reasons(in: log) == ["not ready: the server is stopping"])
        #expect(alive.status == 200 && upload.status == 200)
        #expect(health.isStopping)
    }

    @Test("formpost serve on SIGTERM with --shutdown-delay: /readyz answers 503 at once while new connections are still taken and an upload in flight completes",
          .timeLimit(.minutes(3)))
    func sigtermMakesServeUnready() async throws {
        let directory = try SampleDirectory()
        let uploads = directory.path + "/uploads"
        let file = try directory.file("big.bin", size: 8 << 20, seed: 6)
        let (readyBefore, readyStopping, liveStopping, outcome, stderr) = try await offPool {
            () -> (String, String, String, ChildProcess.Finished, String) in
            let port = try freePort()
            let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", uploads, "--shutdown-delay", "120"],
                                          stdout: .discard, stderr: .capture)
            try RawSocket.waitForListenerBlocking(port: port, attempts: 800)
            let get = { (path: String) throws -> String in
                let result = try ChildProcess("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)\(path)"]).finish()
                return String(decoding: result.stdout, as: UTF8.self)
            }
            let readyBefore = try get("/readyz")
            // About 4 s at 2 MiB/s: the stop comes with a quarter of it stored.
            let upload = try ChildProcess("curl", ["-s", "--limit-rate", "2M", "-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"])
            guard GracefulStopTests.waitForBytes(under: uploads, moreThan: 2 << 20) else { throw Subprocess.Failure(description: "the upload stored nothing in 60 s") }
            kill(server.pid, SIGTERM)
            var readyStopping = ""
            for _ in 0..<400 where readyStopping != "503" {
                readyStopping = try get("/readyz")
                if readyStopping != "503" { usleep(25_000) }
            }
            let liveStopping = try get("/healthz")
            let outcome = try upload.finish()
            kill(server.pid, SIGKILL)
            return (readyBefore, readyStopping, liveStopping, outcome, String(decoding: try server.finish().stderr, as: UTF8.self))
        }
        #expect(readyBefore == "200")
        #expect(readyStopping == "503", "/readyz answered \(readyStopping) after SIGTERM")
        #expect(liveStopping == "200")
        #expect(outcome.status == 0)
        #expect(try JSONDecoder().decode(Receipt.self, from: outcome.stdout).files.map(\.size) == [8 << 20])
        #expect(stderr.contains("formpost: stopping: /readyz answers 503; connections are still taken for 120 s"), "\(stderr)")
    }
}

#if os(Linux)
extension TmpfsMount {
    /// Remounts the tmpfs read-only (every write then fails with `EROFS`, root's too) or
    /// writable again.
    func remount(readOnly: Bool) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        guard mount("tmpfs", path, "tmpfs", flags, nil) == 0 else {
            throw Subprocess.Failure(description: "remounting \(path) failed: \(String(cString: strerror(errno)))")
        }
    }
}
#endif
