import Foundation
import FormPostServer
import HTTPTypes
import Hummingbird
import Logging
import Testing

/// Authorizing uploads before their bodies are read: ``UploadServer/authorize`` in Swift,
/// and `formpost serve --hook-url` asking an HTTP service.
@Suite("Upload authorization")
struct UploadAuthorizationTests {
    /// The JSON bodies a hook received, in order.
    final class Received: @unchecked Sendable {
        private var bodies: [Data] = []
        private let lock = NSLock()

        func add(_ body: Data) { lock.withLock { bodies.append(body) } }
        var all: [Data] { lock.withLock { bodies } }

        /// The `upload` objects received.
        var uploads: [[String: Any]] {
            all.compactMap { (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any] }.compactMap { $0["upload"] as? [String: Any] }
        }
    }

    /// Runs `body` with the port of a hook on 127.0.0.1: `POST /hook` allows a request carrying
    /// `Authorization: Bearer good` (`{"allow": true}`) and refuses others with 403 `{"error":"bad token"}`;
    /// `POST /slow` answers after a minute.
    static func withHook<T: Sendable>(_ received: Received, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { request, _ -> Response in
            let data = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            received.add(data)
            let upload = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["upload"] as? [String: Any]
            let headers = upload?["headers"] as? [String: [String]]
            if headers?["authorization"] == ["Bearer good"] {
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"allow": true}"#)))
            }
            return Response(status: .forbidden, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: #"{"error":"bad token"}"#)))
        }
        router.post("slow") { _, _ -> Response in
            try await Task.sleep(for: .seconds(60))
            return Response(status: .noContent)
        }
        return try await whileRunning({ onStarted in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onStarted($0.localAddress?.port ?? 0) })
        }, body)
    }

    /// A `formpost serve --hook-url`, storing into a directory of its own.
    final class HookedServer: Sendable {
        let sample: SampleDirectory
        let uploads: String
        let port: Int
        let server: ChildProcess

        init(hookURL: String, timeout: String? = nil) throws {
            sample = try SampleDirectory()
            uploads = sample.path + "/uploads"
            port = try freePort()
            server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", uploads, "--hook-url", hookURL]
                                      + (timeout.map { ["--hook-timeout", $0] } ?? []), stdout: .discard, stderr: .capture)
            try RawSocket.waitForListenerBlocking(port: port, attempts: 800)
        }

        var base: String { "http://127.0.0.1:\(port)" }

        /// The files stored (hidden state directories left out).
        var stored: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter { !$0.hasPrefix(".") }
        }

        /// The regular files under the storage directory, the receivers' own included.
        var storedBytes: Int64 { GracefulStopTests.bytes(under: uploads) }

        /// Stops the server; what it logged.
        func stopAndReadLog() throws -> String {
            server.stop()
            return String(decoding: try server.finish(timeout: 30).stderr, as: UTF8.self)
        }
    }

    static func curl(_ arguments: [String]) throws -> SignedUploadServeTests.Answer {
        try SignedUploadServeTests.curl(arguments)
    }

    @Test("UploadServer.authorize in Swift: a denied form is answered 403 with the message, nothing stored; an allowed one is stored; asked once per upload, as multipart or ietf, with the headers",
          .timeLimit(.minutes(2)))
    func swiftClosure() async throws {
        let uploads = try SampleDirectory()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: uploads.path), logger: logger)
        let resumable = try ResumableUploadReceiver(receiver: receiver, expiry: .seconds(3600), logger: logger)
        var server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, resumable: resumable)
        let asked = Received()
        server.authorize = { request in
            let token = request.headerFields[.authorization] ?? ""
            asked.add(Data("\(request.uploadProtocol.rawValue) \(request.method) \(request.path) \(request.query) \(token)".utf8))
            return token == "Bearer good" ? .allow : .deny(status: .forbidden, message: "no entry for \(request.path)")
        }
        let file = try uploads.file("a.bin", size: 2 << 20, seed: 4)
        let stored = { @Sendable in ((try? FileManager.default.contentsOfDirectory(atPath: uploads.path)) ?? []).filter { !$0.hasPrefix(".") && $0 != "a.bin" } }
        let (denied, allowed, draft) = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            try await offPool {
                let denied = try Self.curl(["-F", "f=@" + file, "http://127.0.0.1:\(port)/upload?x=1"])
                let nothing = stored()
                let allowed = try Self.curl(["-H", "Authorization: Bearer good", "-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"])
                let draft = try Self.curl(["-H", "Upload-Draft-Interop-Version: 8", "-H", "Upload-Complete: ?1", "--data-binary", "@" + file,
                                           "http://127.0.0.1:\(port)/upload"])
                return ((denied, nothing), allowed, draft)
            }
        }
        #expect(denied.0.status == 403)
        #expect(denied.0.body == #"{"error":"no entry for \/upload"}"# || denied.0.body == #"{"error":"no entry for /upload"}"#, "\(denied.0.body)")
        #expect(denied.1.isEmpty)
        #expect(allowed.status == 200, "\(allowed.body)")
        #expect(draft.status == 403, "\(draft.body)")
        #expect(stored().count == 1)
        #expect(asked.all.map { String(decoding: $0, as: UTF8.self) } == ["multipart POST /upload x=1 ", "multipart POST /upload  Bearer good", "ietf POST /upload  "])
    }

    @Test("formpost serve --hook-url: the hook's 403 refuses a form or a tus creation with its message, nothing stored; its 2xx lets them through (curl -F, formpost --resumable tus); it receives the protocol, path and headers",
          .timeLimit(.minutes(3)))
    func hookAllowsAndDenies() async throws {
        let received = Received()
        try await Self.withHook(received) { hookPort in
            // A minute for the hook, which runs in this test process: beside the other
            // suites, its first answer took longer than the default 5 s.
            let server = try await offPool { try HookedServer(hookURL: "http://127.0.0.1:\(hookPort)/hook", timeout: "60") }
            let file = try server.sample.file("b.bin", size: 3 << 20, seed: 5)
            let (bad, nothing, good, tusDenied, tusUploaded) = try await offPool {
                let bad = try Self.curl(["-H", "Authorization: Bearer bad", "-F", "f=@" + file, server.base + "/upload"])
                let nothing = server.stored.isEmpty && server.storedBytes == 0
                let good = try Self.curl(["-H", "Authorization: Bearer good", "-F", "f=@" + file, server.base + "/upload"])
                let tusDenied = try Self.curl(["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 10", server.base + "/files"])
                let tusUploaded = try ChildProcess("env", ["XDG_STATE_HOME=" + server.sample.path + "/state", formpostBinary, "-s", "--resumable", "tus",
                                                           "--chunk-size", "1M", "-T", file, "-H", "Authorization: Bearer good", server.base + "/files"]).finish()
                return (bad, nothing, good, tusDenied, tusUploaded)
            }
            #expect(bad.status == 403 && bad.body.contains("bad token"), "\(bad.status) \(bad.body)")
            #expect(nothing)
            #expect(good.status == 200, "\(good.body)")
            #expect(tusDenied.status == 403 && tusDenied.body.contains("bad token"), "\(tusDenied.status) \(tusDenied.body)")
            #expect(tusUploaded.status == 0, "\(String(decoding: tusUploaded.stderr, as: UTF8.self))")
            let original = try Data(contentsOf: URL(fileURLWithPath: file))
            let stored = try server.stored.map { try Data(contentsOf: URL(fileURLWithPath: server.uploads + "/" + $0)) }
            #expect(stored.count == 2 && stored.allSatisfy { $0 == original })
            let uploads = received.uploads
            // The appends of the tus upload go to its own resource: the hook is not asked about them.
            #expect(uploads.count == 4)
            #expect(uploads.map { $0["protocol"] as? String } == ["multipart", "multipart", "tus", "tus"])
            #expect(uploads.map { $0["path"] as? String } == ["/upload", "/upload", "/files", "/files"])
            #expect(uploads.map { ($0["headers"] as? [String: [String]])?["authorization"] } == [["Bearer bad"], ["Bearer good"], nil, ["Bearer good"]])
            #expect(uploads.allSatisfy { $0["method"] as? String == "POST" && $0["client"] as? String == "127.0.0.1" && $0["query"] as? String == "" })
            if let example = received.all.dropFirst().first { print("hook request body: " + String(decoding: example, as: UTF8.self)) }
        }
    }

    @Test("formpost serve --hook-url: a hook nobody listens on, or one slower than --hook-timeout, gets the upload answered 503 with Retry-After, nothing stored",
          .timeLimit(.minutes(3)))
    func hookUnavailable() async throws {
        let received = Received()
        try await Self.withHook(received) { hookPort in
            let downURL = "http://127.0.0.1:\(try freePort())/hook", slowURL = "http://127.0.0.1:\(hookPort)/slow"
            let down = try await offPool { try HookedServer(hookURL: downURL) }
            let slow = try await offPool { try HookedServer(hookURL: slowURL, timeout: "1") }
            let file = try down.sample.file("c.bin", size: 1 << 20, seed: 6)
            let answers = try await offPool {
                try [down, slow].map { try Self.curl(["-i", "-H", "Authorization: Bearer good", "-F", "f=@" + file, $0.base + "/upload"]) }
            }
            for (answer, server) in zip(answers, [down, slow]) {
                #expect(answer.status == 503, "\(answer.body)")
                #expect(answer.body.lowercased().contains("retry-after: 5"), "\(answer.body)")
                #expect(answer.body.contains("authorization service is unavailable"), "\(answer.body)")
                #expect(!answer.body.contains("100 Continue"), "\(answer.body)")
                #expect(server.stored.isEmpty && server.storedBytes == 0)
            }
            // Each failure is logged at error level, with its cause.
            let logs = try await offPool { try [down, slow].map { try $0.stopAndReadLog() } }
            for (log, url) in zip(logs, [downURL, slowURL]) {
                #expect(log.contains(" error formpost.serve: [FormPostReceiving] POST /upload 503 client=127.0.0.1: the upload could not be authorized: the hook at \(url) gave no answer: "),
                        "\(log)")
            }
        }
    }

    @Test("formpost serve refuses a --hook-url that is not http or https, and a --hook-timeout that is not positive, with exit status 2")
    func badHookOptions() throws {
        let sample = try SampleDirectory()
        let scheme = try formpost(["serve", "--port", "0", "--dir", sample.path + "/uploads", "--hook-url", "ftp://127.0.0.1/hook"])
        let timeout = try formpost(["serve", "--port", "0", "--dir", sample.path + "/uploads", "--hook-url", "http://127.0.0.1/hook", "--hook-timeout", "0"])
        #expect(scheme.status == 2 && scheme.stderr.contains("--hook-url ftp://127.0.0.1/hook: expected an http or https URL"), "\(scheme.stderr)")
        #expect(timeout.status == 2 && timeout.stderr.contains("--hook-timeout 0.0: expected seconds between 0 and 3600"), "\(timeout.stderr)")
    }
}
