import AsyncHTTPClient
import Foundation
import FormPostServer
import HTTPTypes
import Hummingbird
import Synchronization
import Testing

/// Hooks that fail closed: only an explicit verdict allows an upload; redirects, bodies that
/// are no verdict, answers slower than the timeout to their last byte, and a hook that is
/// down all refuse it, with nothing stored and the hook's credentials in no log line.
extension UploadAuthorizationTests {
    /// What the verdict hook saw.
    final class VerdictHookLog: Sendable {
        /// Requests to the sign-in page the redirect points to.
        let signInVisits = Mutex(0)
        /// Whether the slow answer's body was sent to its end.
        let slowBodyFinished = Mutex(false)
        /// The `Authorization` header fields the hook received.
        let authorizations = Mutex<[String]>([])
    }

    /// The slow answer's body: a verdict that allows, padded, sent one byte a second.
    static let slowBody = Array((String(repeating: " ", count: 24) + #"{"allow":true}"#).utf8)

    /// Runs `body` with the port of a hook on 127.0.0.1 answering each path as its name says.
    static func withVerdictHook<T: Sendable>(_ log: VerdictHookLog, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router(context: BasicRequestContext.self)
        let json = { @Sendable (text: String) in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        let html = Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html><body>Sign in</body></html>")))
        router.post("redirect") { _, _ in Response(status: .found, headers: [.location: "/signin"]) }
        router.get("signin") { _, _ in
            log.signInVisits.withLock { $0 += 1 }
            return html
        }
        router.post("signin") { _, _ in
            log.signInVisits.withLock { $0 += 1 }
            return html
        }
        router.post("redirectToAllow") { _, _ in Response(status: .found, headers: [.location: "/allowed"]) }
        router.get("allowed") { _, _ in json(#"{"allow": true}"#) }
        router.post("empty") { _, _ in Response(status: .ok) }
        router.post("html") { _, _ in html }
        router.post("reject") { _, _ in json(#"{"allow": false, "status": 403, "message": "Not in your quota."}"#) }
        router.post("allow") { request, _ in
            log.authorizations.withLock { $0.append(request.headers[.authorization] ?? "") }
            return json(#"{"allow": true}"#)
        }
        router.post("slowBody") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
                for byte in Self.slowBody {
                    try await writer.write(ByteBuffer(bytes: [byte]))
                    try await Task.sleep(for: .seconds(1))
                }
                try await writer.finish(nil)
                log.slowBodyFinished.withLock { $0 = true }
            })
        }
        return try await whileServing(router, body)
    }

    /// One answer of a hook, and what the upload it is asked about gets.
    enum HookAnswer: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case redirect = "302 to a sign-in page answering 200 text/html"
        case empty = "200 with an empty body"
        case html = "200 text/html"
        case reject = #"200 {"allow": false, "status": 403, "message": …}"#
        case allow = #"200 {"allow": true}"#
        case slowBody = "200 whose body comes one byte a second, past the 1 s timeout"
        case down = "no hook listening"

        var testDescription: String { rawValue }

        /// The hook's path.
        var path: String { "\(self)" }

        /// The status the upload is answered.
        var expectedStatus: Int {
            switch self {
            case .allow: 200
            case .reject: 403
            default: 503
            }
        }
    }

    @Test("formpost serve --hook-url fails closed: only an explicit verdict allows an upload; a redirect, an empty or HTML 2xx, a body slower than --hook-timeout, a hook that is down refuse it with 503 and nothing stored; a JSON refusal answers its status and message; the URL's credentials are sent as Basic authorization and never logged",
          .timeLimit(.minutes(3)), arguments: HookAnswer.allCases)
    func hookAnswer(_ row: HookAnswer) async throws {
        let log = VerdictHookLog()
        try await Self.withVerdictHook(log) { hookPort in
            let port = row == .down ? try freePort() : hookPort
            let url = "http://formpost:s3cr3t-in-url@127.0.0.1:\(port)/\(row.path)?key=q-s3cr3t"
            // 1 s for the slow body alone: the others answer at once, however loaded the machine.
            let server = try await offPool { try HookedServer(hookURL: url, timeout: row == .slowBody ? "1" : "30") }
            let file = try server.sample.file("d.bin", size: 64 << 10, seed: 7)
            let answer = try await offPool { try Self.curl(["-i", "-F", "f=@" + file, server.base + "/upload"]) }
            let slowBodyFinished = log.slowBodyFinished.withLock { $0 }
            let stored = server.stored
            let storedBytes = server.storedBytes
            let logged = try await offPool { try server.stopAndReadLog() }
            #expect(answer.status == row.expectedStatus, "\(answer.body)")
            switch row.expectedStatus {
            case 200:
                #expect(stored.count == 1, "\(stored)")
                #expect(log.authorizations.withLock { $0 } == ["Basic " + Data("formpost:s3cr3t-in-url".utf8).base64EncodedString()])
            case 403:
                #expect(answer.body.contains("Not in your quota."), "\(answer.body)")
                #expect(stored.isEmpty && storedBytes == 0, "\(stored)")
            default:
                #expect(answer.body.lowercased().contains("retry-after: 5"), "\(answer.body)")
                #expect(answer.body.contains("authorization service is unavailable"), "\(answer.body)")
                #expect(stored.isEmpty && storedBytes == 0, "\(stored)")
                #expect(logged.contains("the upload could not be authorized: the hook at http://127.0.0.1:\(port)/\(row.path) "), "\(logged)")
            }
            if row == .redirect { #expect(log.signInVisits.withLock { $0 } == 0, "the redirect was followed") }
            if row == .slowBody { #expect(!slowBodyFinished, "the upload was answered only once the hook's body had ended") }
            #expect(!logged.contains("s3cr3t"), "\(logged)")
        }
    }

    @Test("UploadAuthorizationHook with a client of the caller's that follows redirects: an allowing answer reached through a redirect is no verdict (unavailable, naming the redirect)",
          .timeLimit(.minutes(3)))
    func callerClientFollowingRedirects() async throws {
        try await Self.withVerdictHook(VerdictHookLog()) { hookPort in
            let following = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
            let hook = UploadAuthorizationHook(url: "http://127.0.0.1:\(hookPort)/redirectToAllow", timeout: .seconds(30), client: following)
            let question = UploadAuthorizationRequest(uploadProtocol: .multipart, method: "POST", path: "/upload", query: "", headerFields: [:], clientAddress: nil)
            let decided = await hook.authorize(question)
            try await following.shutdown()
            guard case .unavailable(let cause) = decided else {
                Issue.record("an answer reached through a redirect decided \(decided)")
                return
            }
            #expect(cause.contains("through a redirect"), "\(cause)")
        }
    }

    @Test("the credentials and query of --hook-url appear in no log line of formpost serve: not when the hook fails pre-create, not when it refuses an event, not in a usage error",
          .timeLimit(.minutes(2)))
    func hookCredentialsNeverLogged() async throws {
        let router = Router(context: BasicRequestContext.self)
        let events = Mutex(0)
        router.post("hook") { request, _ -> Response in
            let data = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            if object?["type"] as? String == "pre-create" {
                let allow = ((object?["upload"] as? [String: Any])?["headers"] as? [String: [String]])?["authorization"] == ["Bearer good"]
                return allow ? Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"allow": true}"#))) : Response(status: .internalServerError)
            }
            events.withLock { $0 += 1 }
            return Response(status: .serviceUnavailable)
        }
        try await whileServing(router) { hookPort in
            let sample = try SampleDirectory()
            let port = try freePort()
            let url = "http://hooks:pa55-s3cr3t@127.0.0.1:\(hookPort)/hook?token=t0k3n-s3cr3t"
            let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", sample.path + "/uploads", "--hook-url", url,
                                                           "--hook-timeout", "60", "--hook-events", "pre-create,post-finish"], stdout: .discard, stderr: .capture)
            try await offPool { try RawSocket.waitForListenerBlocking(port: port, attempts: 800) }
            let file = try sample.file("e.bin", size: 1000, seed: 8)
            let (failed, stored) = try await offPool {
                (try Self.curl(["-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"]),
                 try Self.curl(["-H", "Authorization: Bearer good", "-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"]))
            }
            #expect(failed.status == 503 && stored.status == 200, "\(failed.body) \(stored.body)")
            // Offered twice: the first refusal was logged before its retry was scheduled.
            #expect(try await UploadEventTests.eventually(60) { events.withLock { $0 } >= 2 }, "the event was not offered again")
            server.stop()
            let logged = String(decoding: try await offPool { try server.finish(timeout: 30) }.stderr, as: UTF8.self)
            #expect(logged.contains("the hook at http://127.0.0.1:\(hookPort)/hook answered 500"), "\(logged)")
            #expect(logged.contains("the hook at http://127.0.0.1:\(hookPort)/hook answered 503"), "\(logged)")
            #expect(!logged.contains("s3cr3t"), "\(logged)")
            let usage = try await offPool {
                try formpost(["serve", "--port", "0", "--dir", sample.path + "/uploads", "--hook-url", "ftp://hooks:pa55-s3cr3t@127.0.0.1/hook?token=s3cr3t"])
            }
            #expect(usage.status == 2 && usage.stderr.contains("--hook-url ftp://127.0.0.1/hook: expected an http or https URL"), "\(usage.stderr)")
            #expect(!usage.stderr.contains("s3cr3t"), "\(usage.stderr)")
        }
    }
}

/// Runs `body` with the port of a hook answering by `router` on 127.0.0.1, stopped after it.
func whileServing<T: Sendable>(_ router: Router<BasicRequestContext>, _ body: @Sendable (Int) async throws -> T) async throws -> T {
    try await whileRunning({ onStarted in
        Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                    onServerRunning: { await onStarted($0.localAddress?.port ?? 0) })
    }, body)
}
