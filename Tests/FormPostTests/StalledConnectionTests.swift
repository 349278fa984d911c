import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormPost
import FormPostServer
import Multipart
import Testing

/// Clients that connect and stall — a head sent half, a head and no body, nothing at all —
/// against `formpost serve`'s server: the idle timeout closes them, the connection limit
/// bounds them, and uploads go on meanwhile.
@Suite("Stalled connections")
struct StalledConnectionTests {
    private static let halfHead = Array("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty".utf8)
    private static let headWithoutAllOfItsBody = Array((
        "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n"
        + "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n\r\nthe first bytes of a file"
    ).utf8)

    @Test("a silent connection, a head sent half and a body that stops are closed after the idle timeout; nothing is stored")
    func stalledAreClosed() async throws {
        let directory = try SampleDirectory()
        let outcomes = try await withUploadServer(directory: directory.path, limits: ConnectionLimits(idleTimeout: .seconds(1))) { port in
            let silent = try HeldConnection(port: port)
            let half = try HeldConnection(port: port)
            try half.send(Self.halfHead)
            let bodyless = try HeldConnection(port: port)
            try bodyless.send(Self.headWithoutAllOfItsBody)
            var outcomes: [(String, closed: Bool, seconds: Double)] = []
            let started = Date()
            for (name, connection) in [("silent", silent), ("half a head", half), ("a body that stops", bodyless)] {
                let (_, closed) = try await offPool { try connection.readUntilClosed(seconds: 15) }
                outcomes.append((name, closed, Date().timeIntervalSince(started)))
            }
            return outcomes
        }
        for outcome in outcomes {
            #expect(outcome.closed, "\(outcome.0): still open 15 s after the 1 s idle timeout")
            #expect(outcome.seconds >= 0.9, "\(outcome.0) was closed after \(outcome.seconds) s, before the idle timeout")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "the stopped body left a file")
    }

    // The idle timeout is 5 s, not less: under the whole suite's load an upload's own
    // connection can stay silent for seconds, and would be closed as stalled.
    @Test("formpost serve closes 2,000 stalled connections after its --idle-timeout while uploads go on, byte-exact")
    func manyStalled() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("photo.bin", size: 300_000, seed: 4)
        let port = try freePort()
        // A server process of its own: 2,000 connections at once are its load, not the test runner's.
        let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", directory.path + "/uploads",
                                                       "--idle-timeout", "5", "--max-connections", "4096",
                                                       // All 2,000 come from 127.0.0.1, as through a proxy.
                                                       "--max-connections-per-address", "4096"], stdout: .discard, stderr: .discard)
        defer { server.stop() }
        try await RawSocket.waitForListener(port: port, attempts: 400)
        let stalled = try await offPool { () -> [HeldConnection] in
            try (0..<2000).map { _ in
                let connection = try HeldConnection(port: port)
                try connection.send(Self.halfHead)
                return connection
            }
        }
        // Each upload on a connection of its own (curl): a pooled connection left idle between
        // uploads would itself be closed by the idle timeout when the machine is slow.
        var receipts: [Receipt] = []
        for _ in 0..<3 {
            let answer = try await offPool { try Subprocess.runForBytes("curl", ["-sS", "-F", "photo=@\(file)", "http://127.0.0.1:\(port)/upload"]) }
            receipts.append(try JSONDecoder().decode(Receipt.self, from: answer))
        }
        let deadline = Date().addingTimeInterval(30)
        var open = stalled
        while !open.isEmpty && Date() < deadline {
            open.removeAll { $0.isClosedByPeer }
            try await Task.sleep(for: .milliseconds(200))
        }
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(receipts.map { $0.files.map(\.sha256) } == Array(repeating: [expected], count: 3))
        #expect(open.isEmpty, "\(open.count) of 2,000 stalled connections were still open 30 s after a 5 s idle timeout")
        try await offPool { server.stop() }
    }

    @Test("at the connection limit a new client waits for a place, which the idle timeout frees")
    func connectionLimit() async throws {
        let storage = try SampleDirectory()
        // curl, which opens one connection: a client that opens a spare one would leave it
        // waiting for a place until the server stops. The idle timeout applies to curl's
        // connection too: with 1 s, the full suite on 2 cores once reset it (curl exit 56).
        let (output, seconds, heldClosed) = try await withUploadServer(directory: storage.path, limits: ConnectionLimits(idleTimeout: .seconds(3), maxConnections: 2)) { port in
            let held = [try HeldConnection(port: port), try HeldConnection(port: port)]
            try await Task.sleep(for: .milliseconds(200))   // both accepted: the server is at its limit
            let started = Date()
            let output = try await offPool { try Subprocess.run("curl", ["-s", "-F", "a=1", "http://127.0.0.1:\(port)/upload"]) }
            let seconds = Date().timeIntervalSince(started)
            let heldClosed = try await offPool { try held.allSatisfy { try $0.readUntilClosed(seconds: 15).1 } }
            return (output, seconds, heldClosed)
        }
        #expect(output.contains(#""fields":[{"name":"a","value":"1"}]"#), "\(output)")
        #expect(seconds >= 2, "the upload was answered after \(seconds) s: the two held connections did not count against the limit of 2")
        #expect(heldClosed)
    }

    @Test("formpost serve refuses an idle timeout or a connection limit it cannot use, naming the option")
    func serveOptions() throws {
        let directory = try SampleDirectory()
        let cases: [([String], String)] = [
            (["--idle-timeout", "0"], "--idle-timeout 0.0: expected seconds"),
            (["--idle-timeout=-5"], "--idle-timeout -5.0: expected seconds"),
            (["--idle-timeout", "1e9"], "expected seconds between 0 and 86400"),
            (["--max-connections", "0"], "--max-connections must be positive"),
        ]
        for (arguments, message) in cases {
            let result = try formpost(["serve", "--port", "0", "--dir", directory.path + "/uploads"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
