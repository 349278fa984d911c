import Foundation
@testable import FormPostReceiving
import FormPostServer
import Logging
import Testing

/// CORS (``CrossOriginPolicy``) on both servers: preflights from an allowed origin answered
/// before any gate and touching no storage, answers to it readable (`Access-Control-Allow-Origin`,
/// the upload fields exposed), another origin given no CORS field, and none at all without
/// a policy.
@Suite("Uploads from pages of other origins (CORS)")
struct CrossOriginTests {
    static let app = "http://app.example"

    /// Runs a server (`adapter`) with tus at `/files` and the draft at `/uploads`, storing in
    /// a directory of its own, with `policy` and, when `signed`, signed URLs required; then
    /// `body` with its port and directory.
    static func withServer<T: Sendable>(_ policy: CrossOriginPolicy?, signed: Bool, on adapter: ReceiverAdapter,
                                        _ body: @escaping @Sendable (Int, String) throws -> T) async throws -> T {
        let sample = try SampleDirectory()
        let directory = sample.path + "/uploads"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: directory)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        var server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: try TusReceiver(configuration: configuration, logger: logger),
                                  resumable: try ResumableUploadReceiver(receiver: receiver, logger: logger),
                                  uploadSigner: signed ? try UploadURLSigner(key: Array(repeating: 9, count: 32)) : nil)
        server.crossOrigin = policy
        return try await whileServing(server, on: adapter) { port in try await offPool { try body(port, directory) } }
    }

    static func send(_ method: String, _ path: String, port: Int, _ headers: [String: String], body: String = "") throws -> SourcedHTTP.Answer {
        try SourcedHTTP.send(method, path, port: port, from: "127.0.0.1", headers: headers, body: Array(body.utf8))
    }

    static func preflight(_ path: String, port: Int, origin: String, method: String = "POST") throws -> SourcedHTTP.Answer {
        try send("OPTIONS", path, port: port, ["Origin": origin, "Access-Control-Request-Method": method,
                                                "Access-Control-Request-Headers": "tus-resumable,upload-length,upload-metadata"])
    }

    static let tusCreation = ["Tus-Resumable": "1.0.0", "Upload-Length": "5"]

    @Test("an allowed origin: its preflights (tus, the draft, an upload's PATCH) are answered 204 before the signature is asked for, nothing stored; its requests' answers carry Allow-Origin and expose Location and Upload-*; another origin's preflight is 403 and its answers carry no CORS field",
          arguments: ReceiverAdapter.allCases)
    func allowedOrigin(adapter: ReceiverAdapter) async throws {
        let policy = try CrossOriginPolicy(allowedOrigins: [Self.app, "https://other.example:8443"])
        let (answers, stored) = try await Self.withServer(policy, signed: true, on: adapter) { port, directory in
            var answers: [String: SourcedHTTP.Answer] = [:]
            answers["tus"] = try Self.preflight("/files", port: port, origin: Self.app)
            answers["draft"] = try Self.preflight("/upload", port: port, origin: Self.app, method: "PUT")
            answers["patch"] = try Self.preflight("/files/" + String(repeating: "ab", count: 16), port: port, origin: Self.app, method: "PATCH")
            answers["unsigned"] = try Self.send("POST", "/files", port: port, Self.tusCreation.merging(["Origin": Self.app]) { $1 })
            answers["evil preflight"] = try Self.preflight("/files", port: port, origin: "http://evil.example")
            answers["evil unsigned"] = try Self.send("POST", "/files", port: port, Self.tusCreation.merging(["Origin": "http://evil.example"]) { $1 })
            answers["no origin"] = try Self.send("POST", "/files", port: port, Self.tusCreation)
            return (answers, PathSpellingGateTests.stored(in: directory))
        }
        for name in ["tus", "draft", "patch"] {
            let answer = try #require(answers[name])
            #expect(answer.status == 204, "\(name): \(answer.status) \(answer.headers)")
            #expect(answer.headers["access-control-allow-origin"] == Self.app, "\(name): \(answer.headers)")
            let allowed = (answer.headers["access-control-allow-headers"] ?? "").lowercased()
            #expect(["tus-resumable", "upload-length", "upload-metadata", "upload-offset", "upload-complete", "content-type"].allSatisfy(allowed.contains),
                    "\(name): \(allowed)")
            #expect(answer.headers["access-control-allow-methods"]?.contains("PATCH") == true, "\(name): \(answer.headers)")
            #expect(answer.headers["access-control-max-age"] == "7200")
            #expect(answer.headers["access-control-allow-credentials"] == nil)
        }
        let unsigned = try #require(answers["unsigned"])
        #expect(unsigned.status == 401, "\(unsigned.status) \(unsigned.text)")
        #expect(unsigned.headers["access-control-allow-origin"] == Self.app, "\(unsigned.headers)")
        let exposed = (unsigned.headers["access-control-expose-headers"] ?? "").lowercased()
        #expect(["location", "upload-offset", "upload-length", "tus-resumable", "upload-expires"].allSatisfy(exposed.contains), "\(exposed)")
        let evil = try #require(answers["evil preflight"])
        #expect(evil.status == 403 && evil.headers.keys.allSatisfy { !$0.hasPrefix("access-control-") }, "\(evil.status) \(evil.headers)")
        let evilUnsigned = try #require(answers["evil unsigned"])
        #expect(evilUnsigned.status == 401 && evilUnsigned.headers.keys.allSatisfy { !$0.hasPrefix("access-control-") }, "\(evilUnsigned.headers)")
        let plain = try #require(answers["no origin"])
        #expect(plain.status == 401 && plain.headers.keys.allSatisfy { !$0.hasPrefix("access-control-") }, "\(plain.headers)")
        #expect(stored.isEmpty, "\(stored)")
    }

    @Test("any origin (*): a tus upload created and appended from a page, each answer with Allow-Origin * and its fields exposed",
          arguments: ReceiverAdapter.allCases)
    func anyOrigin(adapter: ReceiverAdapter) async throws {
        let answers = try await Self.withServer(try CrossOriginPolicy(allowedOrigins: ["*"]), signed: false, on: adapter) { port, _ in
            let origin = ["Origin": "https://somewhere.example"]
            let created = try Self.send("POST", "/files", port: port, Self.tusCreation.merging(origin) { $1 })
            let location = created.headers["location"] ?? ""
            let appended = try Self.send("PATCH", location, port: port, ["Tus-Resumable": "1.0.0", "Upload-Offset": "0",
                                                                      "Content-Type": "application/offset+octet-stream"].merging(origin) { $1 },
                                         body: "hello")
            return [created, appended]
        }
        #expect(answers.map(\.status) == [201, 204], "\(answers.map(\.status))")
        for answer in answers {
            #expect(answer.headers["access-control-allow-origin"] == "*", "\(answer.headers)")
            #expect(answer.headers["access-control-expose-headers"]?.contains("Upload-Offset") == true, "\(answer.headers)")
        }
    }

    @Test("no policy: no CORS field in any answer, a preflight included (tus's own OPTIONS answers it)", arguments: ReceiverAdapter.allCases)
    func noPolicy(adapter: ReceiverAdapter) async throws {
        let answers = try await Self.withServer(nil, signed: false, on: adapter) { port, _ in
            [try Self.preflight("/files", port: port, origin: Self.app),
             try Self.send("POST", "/files", port: port, Self.tusCreation.merging(["Origin": Self.app]) { $1 })]
        }
        #expect(answers.map(\.status) == [204, 201], "\(answers.map(\.status))")
        for answer in answers {
            #expect(answer.headers.keys.allSatisfy { !$0.hasPrefix("access-control-") }, "\(answer.headers)")
        }
    }

    @Test("origins are * or http(s)://host[:port]: a path, a trailing slash, another scheme or none at all is refused")
    func origins() throws {
        #expect(throws: CrossOriginPolicyError.noOrigin) { try CrossOriginPolicy(allowedOrigins: []) }
        for bad in ["https://app.example/", "https://app.example/upload", "ftp://app.example", "app.example", "https://", "https://user@app.example"] {
            #expect(throws: CrossOriginPolicyError.invalidOrigin(bad)) { try CrossOriginPolicy(allowedOrigins: [bad]) }
        }
        let policy = try CrossOriginPolicy(allowedOrigins: ["https://app.example:8443", "http://localhost:3000"])
        #expect(policy.allowOrigin("https://APP.example:8443") == "https://APP.example:8443")
        #expect(policy.allowOrigin("https://app.example") == nil)
        #expect(policy.allowOrigin("null") == nil)
    }

    @Test("Chromium: a page of a listed origin uploads a form by fetch, a tus upload and a draft upload, reading Location and Upload-Offset; the same page of another origin reads none of their answers (tus and the draft are stopped at the preflight; the form, a request a browser sends without one, is taken and its answer hidden)",
          .timeLimit(.minutes(3)), arguments: ReceiverAdapter.allCases)
    func chromium(adapter: ReceiverAdapter) async throws {
        let missing = try await offPool { try BrowserTests.missingPeers() }
        try #require(missing.isEmpty, "the browser test needs \(missing.joined(separator: ", ")); scripts/test installs them")
        let app = try freePort(), other = try freePort()
        let policy = try CrossOriginPolicy(allowedOrigins: ["http://127.0.0.1:\(app)"])
        let (finished, stored) = try await Self.withServer(policy, signed: false, on: adapter) { port, directory in
            let finished = try ChildProcess("python3", [Subprocess.interopScript("browser_cross_origin.py"), "http://127.0.0.1:\(port)",
                                                        String(app), String(other)]).finish()
            return (finished, PathSpellingGateTests.stored(in: directory).filter { !$0.hasPrefix(".") })
        }
        let stderr = String(decoding: finished.stderr, as: UTF8.self)
        #expect(finished.status == 0, "browser_cross_origin.py exited \(finished.status): \(stderr)")
        let outcome = try #require(try JSONSerialization.jsonObject(with: finished.stdout) as? [String: [[String: Any]]], "\(stderr)")
        let fromApp = try #require(outcome["app"]), fromOther = try #require(outcome["other"])
        try #require(fromApp.count == 3 && fromOther.count == 3, "\(outcome)")
        // The form: its receipt read, naming the file's SHA-256.
        #expect(fromApp[0]["status"] as? Int == 200, "\(fromApp[0])")
        #expect((fromApp[0]["body"] as? String)?.contains(sha256Hex(Data("hello".utf8))) == true, "\(fromApp[0])")
        // tus: the creation's Location and the append's Upload-Offset read.
        let created = fromApp[1]["created"] as? [String: Any], appended = fromApp[1]["appended"] as? [String: Any]
        #expect(created?["status"] as? Int == 201 && (created?["location"] as? String)?.hasPrefix("/files/") == true, "\(fromApp[1])")
        #expect(appended?["status"] as? Int == 204 && appended?["offset"] as? String == "5", "\(fromApp[1])")
        // The draft: a creation with its whole body, answered complete.
        #expect((fromApp[2]["status"] as? Int).map { (200..<300).contains($0) } == true, "\(fromApp[2])")
        #expect((fromApp[2]["body"] as? String)?.contains(sha256Hex(Data("hello".utf8))) == true, "\(fromApp[2])")
        // Another origin: the browser lets the page read nothing.
        for result in fromOther {
            #expect(result["error"] as? String != nil, "another origin's page read an answer: \(result)")
        }
        // The app's three files, and the other origin's form, which its browser sent without
        // asking first (FormData is a simple request): taken, its answer hidden from the page.
        #expect(stored.count == 4, "\(stored)")
    }
}
