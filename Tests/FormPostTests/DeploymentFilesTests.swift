#if os(Linux)
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The deployment the documentation gives (`deploy/formpost.service`, `deploy/nginx.conf`,
/// both shown whole in the article "Running in production"), run as written: systemd checks
/// the unit, the unit's own command line serves behind nginx with the front configuration
/// (TLS, HTTP/2, streaming), its JSON log lines say who uploaded what, and the stop systemd
/// sends ends it within the unit's stop timeout. Only the machine-specific words change:
/// the binary's path, the directories, the ports and the certificate.
@Suite("The deployment files of the documentation", .serialized)
struct DeploymentFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let unitPath = root + "/deploy/formpost.service"
    static let frontPath = root + "/deploy/nginx.conf"
    static let articlePath = root + "/Sources/FormPostReceiving/FormPostReceiving.docc/RunningInProduction.md"

    /// `text` with each of `replacements` made; each must occur, so that a change to the
    /// files that this test would no longer follow fails it instead of passing unnoticed.
    static func substituting(_ text: String, _ replacements: [(String, String)]) throws -> String {
        var result = text
        for (old, new) in replacements {
            guard result.contains(old) else { throw Subprocess.Failure(description: "the deployment file no longer has \"\(old)\"") }
            result = result.replacingOccurrences(of: old, with: new)
        }
        return result
    }

    /// The value of `key=` in `unit` (its one line).
    static func setting(_ key: String, in unit: String) -> String? {
        unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    @Test("the article shows both files as they are")
    func articleShowsTheFiles() throws {
        let article = try String(contentsOfFile: Self.articlePath, encoding: .utf8)
        for path in [Self.unitPath, Self.frontPath] {
            let file = try String(contentsOfFile: path, encoding: .utf8)
            #expect(article.contains("\n" + file + "```"), "\(path) is not in the article as it is")
        }
    }

    @Test("systemd finds nothing wrong with the unit", .timeLimit(.minutes(1)))
    func unitVerifies() async throws {
        let unit = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
        let sample = try SampleDirectory()
        let checked = sample.path + "/formpost.service"
        try Self.substituting(unit, [("/usr/local/bin/formpost", formpostBinary)]).write(toFile: checked, atomically: true, encoding: .utf8)
        let finished = try await offPool { try ChildProcess("systemd-analyze", ["verify", checked]).finish(timeout: 60) }
        let said = String(decoding: finished.stdout + finished.stderr, as: UTF8.self)
        #expect(finished.status == 0, "\(said)")
        #expect(said.isEmpty, "\(said)")
    }

    @Test("the unit's command serves behind the front: JSON request lines name each client and upload, and SIGTERM ends it in time",
          .timeLimit(.minutes(3)))
    func unitServesBehindTheFront() async throws {
        let unit = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
        let sample = try SampleDirectory()
        let fixtures = try await offPool { try TLSFixtures() }
        let serverPort = try freePort(), frontPort = try freePort()
        let command = try #require(Self.setting("ExecStart", in: unit))
        #expect(!command.contains("\"") && !command.contains("'"), "the test splits ExecStart at spaces")
        let arguments = try Self.substituting(command, [("/usr/local/bin/formpost", formpostBinary), ("/var/lib/formpost", sample.path),
                                                        ("--port 8080", "--port \(serverPort)")]).split(separator: " ").map(String.init)
        let server = try ChildProcess(arguments[0], Array(arguments.dropFirst()), stdout: .discard)
        defer { server.stop() }
        try await offPool { try RawSocket.waitForListenerBlocking(port: serverPort, attempts: 800) }

        let front = try Self.substituting(String(contentsOfFile: Self.frontPath, encoding: .utf8), [
            ("listen 443 ssl http2", "listen 127.0.0.1:\(frontPort) ssl http2"),
            ("server 127.0.0.1:8080", "server 127.0.0.1:\(serverPort)"),
            ("/etc/ssl/certs/uploads.example.com.pem", fixtures.certificatePath),
            ("/etc/ssl/private/uploads.example.com.key", fixtures.keyPath),
        ])
        let nginxDirectory = sample.path + "/nginx"
        try FileManager.default.createDirectory(atPath: nginxDirectory, withIntermediateDirectories: true)
        try front.write(toFile: nginxDirectory + "/formpost.conf", atomically: true, encoding: .utf8)
        try NginxFront.mainConfiguration(directory: nginxDirectory, http: "  include \(nginxDirectory)/formpost.conf;").write(toFile: nginxDirectory + "/nginx.conf", atomically: true, encoding: .utf8)
        let nginx = try ChildProcess("nginx", ["-p", nginxDirectory, "-c", nginxDirectory + "/nginx.conf", "-g", "daemon off;"], stdout: .discard, stderr: .discard)
        defer { nginx.stop() }
        try await offPool { try RawSocket.waitForListenerBlocking(port: frontPort, attempts: 200) }

        // A multipart form from 127.0.0.2 over HTTP/2, and a tus upload from 127.0.0.3.
        let file = sample.path + "/photo.bin"
        try Data((0..<300_000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: file))
        let base = "https://localhost:\(frontPort)"
        let tls = ["--cacert", fixtures.caPath, "--resolve", "localhost:\(frontPort):127.0.0.1"]
        let form = try await offPool {
            try ChildProcess("curl", ["-s", "--http2", "--interface", "127.0.0.2", "-F", "title=hi", "-F", "photo=@\(file)",
                                      "-w", "\n%{http_code} %{http_version} %{size_upload}"] + tls + [base + "/upload"]).finish(timeout: 60)
        }
        let formOutput = String(decoding: form.stdout, as: UTF8.self)
        let formSummary = formOutput.split(separator: "\n").last.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(formSummary.first == "200" && formSummary.dropFirst().first == "2", "\(formOutput)")
        let formBytes = try #require(formSummary.last.flatMap(Int.init))
        let creation = try await offPool {
            try ChildProcess("curl", ["-s", "-D", "-", "-o", "/dev/null", "--interface", "127.0.0.3", "-X", "POST", "-H", "Tus-Resumable: 1.0.0",
                                      "-H", "Upload-Length: 10"] + tls + [base + "/files"]).finish(timeout: 60)
        }
        let headers = String(decoding: creation.stdout, as: UTF8.self)
        let location = try #require(headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }?
            .dropFirst("location:".count).trimmingCharacters(in: .whitespaces), "\(headers)")
        let uploadID = try #require(location.split(separator: "/").last.map(String.init))
        let append = try await offPool {
            try ChildProcess("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.3", "-X", "PATCH",
                                      "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Offset: 0", "-H", "Content-Type: application/offset+octet-stream",
                                      "--data-binary", "0123456789"] + tls + [base + location]).finish(timeout: 60)
        }
        #expect(String(decoding: append.stdout, as: UTF8.self) == "204")

        // The stop systemd sends; the unit's TimeoutStopSec bounds it.
        let stopLimit = try #require(Self.setting("TimeoutStopSec", in: unit).flatMap(Double.init))
        let stopped = Date()
        kill(server.pid, SIGTERM)
        let finished = try await offPool { try server.finish(timeout: stopLimit) }
        let stopSeconds = Date().timeIntervalSince(stopped)
        #expect(finished.status == 0)
        #expect(stopSeconds < stopLimit, "the stop took \(stopSeconds) s")

        let log = String(decoding: finished.stderr, as: UTF8.self)
        let lines = log.split(separator: "\n").map(String.init)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is JSON: \(log)")
        #expect(objects.contains { ($0["message"] as? String)?.hasPrefix("receiving on http://127.0.0.1:\(serverPort)/") == true }, "\(log)")
        func request(_ method: String, _ path: String) -> [String: Any]? {
            objects.first { $0["method"] as? String == method && $0["path"] as? String == path }
        }
        let formLine = try #require(request("POST", "/upload"), "\(log)")
        #expect(formLine["status"] as? Int == 200 && formLine["client"] as? String == "127.0.0.2", "\(formLine)")
        #expect(formLine["bytes"] as? Int == formBytes && formLine["files"] as? Int == 1 && formLine["fields"] as? Int == 1, "\(formLine)")
        #expect(formLine["file_bytes"] as? Int == 300_000 && formLine["duration"] is Double, "\(formLine)")
        #expect(formLine["level"] as? String == "info" && formLine["label"] as? String == "formpost.serve", "\(formLine)")
        let created = try #require(request("POST", "/files"), "\(log)")
        // An upload is named by the first 8 of its 32 hex digits: no line holds its whole ID.
        let shortID = String(uploadID.prefix(8))
        #expect(created["status"] as? Int == 201 && created["client"] as? String == "127.0.0.3" && created["upload"] as? String == shortID, "\(created)")
        let appended = try #require(request("PATCH", "/files/" + shortID + "…"), "\(log)")
        #expect(appended["status"] as? Int == 204 && appended["bytes"] as? Int == 10 && appended["upload"] as? String == shortID, "\(appended)")
        #expect(uploadID.count == 32 && !log.contains(uploadID), "the log holds the upload's whole ID: \(log)")
        #expect(objects.contains { ($0["message"] as? String)?.hasPrefix("stopping: /readyz answers 503") == true }, "\(log)")
    }
}
#endif
