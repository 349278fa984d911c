import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Multipart
import Testing

/// `formpost serve` stopped by SIGTERM: it takes no new connection, lets the requests in
/// flight finish for up to `--shutdown-grace`, then closes them; what a closed resumable
/// upload had stored is where it goes on from when the server runs again.
@Suite("formpost serve stops gracefully")
struct GracefulStopTests {
    /// Starts `formpost serve` on `port` (a free one by default), storing into `directory`.
    static func serve(directory: String, grace: Int, port: Int? = nil) throws -> (server: ChildProcess, port: Int) {
        let port = try port ?? freePort()
        let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", directory, "--shutdown-grace", String(grace)],
                                      stdout: .discard, stderr: .capture)
        try RawSocket.waitForListenerBlocking(port: port, attempts: 800)
        return (server, port)
    }

    /// The bytes of the regular files under `directory` (stored, partial or resumable).
    static func bytes(under directory: String) -> Int64 {
        var total: Int64 = 0
        let walker = FileManager.default.enumerator(atPath: directory)
        while let name = walker?.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? Int64) ?? 0 }
        }
        return total
    }

    /// Waits until the files under `directory` hold more than `least` bytes (at most 60 s);
    /// whether they got there.
    static func waitForBytes(under directory: String, moreThan least: Int64) -> Bool {
        for _ in 0..<1200 {
            if bytes(under: directory) > least { return true }
            usleep(50_000)
        }
        return false
    }

    @Test("SIGTERM during a multipart upload: the upload completes and is stored, no new connection is taken meanwhile, and the server exits 0 once it is done",
          .timeLimit(.minutes(3)))
    func inFlightUploadCompletes() async throws {
        let directory = try SampleDirectory()
        let uploads = directory.path + "/uploads"
        let file = try directory.file("big.bin", size: 16 << 20, seed: 4)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let (outcome, refusedWhileStopping, server) = try await offPool { () -> (ChildProcess.Finished, Bool, ChildProcess.Finished) in
            let (server, port) = try Self.serve(directory: uploads, grace: 120)
            // About 4 s at 4 MiB/s: the stop comes with a quarter of it stored.
            let upload = try ChildProcess("curl", ["-s", "--limit-rate", "4M", "-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"])
            guard Self.waitForBytes(under: uploads, moreThan: 4 << 20) else { throw Subprocess.Failure(description: "the upload stored nothing in 60 s") }
            kill(server.pid, SIGTERM)
            // The listening socket closes at once; the upload's connection stays.
            var refused = false
            for _ in 0..<400 where !refused && upload.isRunning {
                refused = try !RawSocket.connects(port: port)
                if !refused { usleep(25_000) }
            }
            return (try upload.finish(), refused, try server.finish())
        }
        #expect(outcome.status == 0, "curl exited \(outcome.status)")
        let receipt = try JSONDecoder().decode(Receipt.self, from: outcome.stdout)
        #expect(receipt.files.map(\.sha256) == [expected], "\(String(decoding: outcome.stdout, as: UTF8.self))")
        #expect(refusedWhileStopping, "the server still took connections while it stopped")
        #expect(server.status == 0, "formpost serve exited \(server.status): \(String(decoding: server.stderr, as: UTF8.self))")
        #expect(String(decoding: server.stderr, as: UTF8.self).contains("formpost: stopping: no new connections; requests in flight have 120 s to finish"))
    }

    @Test("SIGTERM during a multipart upload longer than the grace: the server closes it after the grace and exits 0, and leaves no byte of it behind",
          .timeLimit(.minutes(3)))
    func cutFormLeavesNothing() async throws {
        let directory = try SampleDirectory()
        let uploads = directory.path + "/uploads"
        let file = try directory.file("long.bin", size: 24 << 20, seed: 6)
        let (client, stopped, stopSeconds, storedAtTerm) = try await offPool { () -> (ChildProcess.Finished, ChildProcess.Finished, Double, Int64) in
            let (server, port) = try Self.serve(directory: uploads, grace: 1)
            // About 24 s at 1 MiB/s: far longer than the grace.
            let upload = try ChildProcess("curl", ["-s", "--limit-rate", "1M", "-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"])
            guard Self.waitForBytes(under: uploads, moreThan: 2 << 20) else { throw Subprocess.Failure(description: "the upload stored nothing in 60 s") }
            let storedAtTerm = Self.bytes(under: uploads)
            let signalled = Date()
            kill(server.pid, SIGTERM)
            let stopped = try server.finish(timeout: 60)
            return (try upload.finish(), stopped, Date().timeIntervalSince(signalled), storedAtTerm)
        }
        #expect(stopped.status == 0, "formpost serve exited \(stopped.status): \(String(decoding: stopped.stderr, as: UTF8.self))")
        #expect(client.status != 0, "the upload completed: \(String(decoding: client.stdout, as: UTF8.self))")
        #expect(storedAtTerm > 2 << 20)
        #expect(Self.bytes(under: uploads) == 0, "left: \((try? FileManager.default.subpathsOfDirectory(atPath: uploads)) ?? [])")
        print("SIGTERM with \(storedAtTerm) bytes of a form received, --shutdown-grace 1: the server exited after \(String(format: "%.2f", stopSeconds)) s")
    }

    @Test("SIGTERM during a tus upload longer than the grace: the server closes it after the grace and exits 0; started again on the directory, the upload goes on from what was stored and the file arrives intact, stored once",
          .timeLimit(.minutes(4)))
    func cutResumableUploadGoesOn() async throws {
        let directory = try SampleDirectory()
        let uploads = directory.path + "/uploads"
        let size = 24 << 20
        let file = try directory.file("long.bin", size: size, seed: 5)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let state = "XDG_STATE_HOME=" + directory.path + "/state"
        let (first, storedAtStop, stopped, again, stored) = try await offPool {
            () -> (ChildProcess.Finished, Int64, ChildProcess.Finished, ChildProcess.Finished, [String]) in
            let (server, port) = try Self.serve(directory: uploads, grace: 1)
            // One PATCH of about 24 s at 1 MiB/s: far longer than the grace.
            let arguments = ["-s", "--json", "--retry", "0", "--limit-rate", "1M", "--resumable", "tus", "--chunk-size", "64M", "-T", file,
                             "http://127.0.0.1:\(port)/files"]
            let client = try ChildProcess("env", [state, formpostBinary] + arguments)
            guard Self.waitForBytes(under: uploads, moreThan: 2 << 20) else { throw Subprocess.Failure(description: "the upload stored nothing in 60 s") }
            kill(server.pid, SIGTERM)
            let stopped = try server.finish(timeout: 60)
            let storedAtStop = Self.bytes(under: uploads)
            let first = try client.finish()
            let (restarted, _) = try Self.serve(directory: uploads, grace: 30, port: port)
            defer { restarted.stop() }
            let again = try ChildProcess("env", [state, formpostBinary, "-s", "--json", "--resumable", "tus", "-T", file, "http://127.0.0.1:\(port)/files"]).finish()
            let stored = try FileManager.default.contentsOfDirectory(atPath: uploads).filter { !$0.hasPrefix(".") }
            return (first, storedAtStop, stopped, again, stored)
        }
        #expect(stopped.status == 0, "formpost serve exited \(stopped.status): \(String(decoding: stopped.stderr, as: UTF8.self))")
        #expect(storedAtStop < Int64(size), "the server had all \(storedAtStop) bytes when it exited: it waited for the upload, past its grace")
        #expect(first.status != 0, "the first run completed: \(String(decoding: first.stdout, as: UTF8.self))")
        #expect(again.status == 0, "exit \(again.status): \(String(decoding: again.stderr, as: UTF8.self))")
        let summary = try #require(try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any])
        let sent = try #require(summary["bytes_sent"] as? Int, "\(summary)")
        #expect(sent < size - (2 << 20), "the second run sent \(sent) of \(size) bytes: it did not go on from what was stored")
        #expect(stored.count == 1, "stored: \(stored)")
        let name = try #require(stored.first)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads + "/" + name))) == expected)
    }
}
