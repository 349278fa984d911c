#if os(Linux)
import AsyncHTTPClient
import Foundation
import FormPost
import Multipart
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import Testing

/// Large uploads over HTTPS and HTTP/2 go on FormPost's own connection (16 KiB DATA frames,
/// each flushed as written): against a server made of SwiftNIO's HTTP/2 stack that grants
/// tiny and huge windows, resets streams, ends connections and never answers.
@Suite("HTTP/2 uploads on FormPost's own connections")
struct HTTP2UploadTests {
    /// What ``HTTP2TestServer`` answers.
    struct Answer: Decodable {
        let length: Int
        let sha256: String
        let largestFrame: Int
        let frames: Int
    }

    /// A form of a field and a file part of `size` bytes, and the SHA-256 of its body.
    private func largeForm(size: Int) async throws -> (form: MultipartForm, sha256: String, length: Int, directory: SampleDirectory) {
        let directory = try SampleDirectory()
        var form = MultipartForm()
        form.append(name: "title", value: "large")
        try form.append(name: "file", fileAt: try directory.file("large.bin", size: size, seed: 4))
        let body = try await form.plan().encodedData()
        return (form, sha256Hex(body), body.count, directory)
    }

    /// Runs `body` with a server doing `action`, and a client trusting its certificate.
    private func withServer<T: Sendable>(window: Int = 65_535, maxFrameSize: Int = 16_384, action: @escaping @Sendable (Int) -> HTTP2TestServer.Action,
                                         _ body: @Sendable (HTTP2TestServer, FormPostClient, URL) async throws -> T) async throws -> T {
        let fixtures = try await offPool { try TLSFixtures() }
        let server = try HTTP2TestServer(fixtures: fixtures, window: window, maxFrameSize: maxFrameSize, action: action)
        defer { server.stop() }
        let configuration = HTTPClient.Configuration(trusting: fixtures.caPath)
        return try await withTransport(configuration) { transport in
            try await body(server, FormPostClient(transport: transport), URL(string: "https://localhost:\(server.port)/upload")!)
        }
    }

    @Test("a 6 MB form goes in DATA frames of 16 KiB though the server allows 1 MiB frames and a 16 MiB window; it arrives byte-exact, with its head, and progress counts every byte",
          arguments: [EncodingStrategy.streaming, .inMemory])
    func framesOfSixteenKiB(strategy: EncodingStrategy) async throws {
        let (form, sha256, length, directory) = try await largeForm(size: 6_000_000)
        let sent = Mutex<Int64>(0)
        let (response, request, port) = try await withServer(window: 16 << 20, maxFrameSize: 1 << 20, action: { _ in .answer }) { server, client, url in
            let response = try await client.upload(form, to: url, headers: [.userAgent: "formpost-test"], strategy: strategy) { progress in
                sent.withLock { $0 = max($0, progress.bytesSent) }
            }
            return (response, server.requests.first, server.port)
        }
        withExtendedLifetime(directory) {}
        #expect(response.status == 200)
        #expect(response.httpVersion == "2")
        let answer = try JSONDecoder().decode(Answer.self, from: Data(response.body))
        #expect(answer.sha256 == sha256)
        #expect(answer.length == length)
        #expect(answer.largestFrame == 16_384, "the largest DATA frame had \(answer.largestFrame) bytes")
        #expect(sent.withLock { $0 } == Int64(length))
        #expect(request?.headers[":authority"] == "localhost:\(port)")
        #expect(request?.headers["content-length"] == String(length))
        #expect(request?.headers["content-type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(request?.headers["user-agent"] == "formpost-test")
        #expect(request?.headers[":method"] == "POST" && request?.headers[":path"] == "/upload" && request?.headers[":scheme"] == "https")
    }

    @Test("an answer of 1 MiB, past HTTP/2's initial flow-control windows of 64 KiB, arrives whole: the client reopens the stream's and the connection's windows as it reads",
          .timeLimit(.minutes(3)))
    func largeAnswer() async throws {
        let (form, sha256, _, directory) = try await largeForm(size: 6_000_000)
        let response = try await withServer(action: { _ in .answerPadded(bytes: 1 << 20) }) { _, client, url in
            try await client.upload(form, to: url)
        }
        withExtendedLifetime(directory) {}
        #expect(response.status == 200 && response.httpVersion == "2")
        #expect(response.body.count > 1 << 20, "the answer had \(response.body.count) bytes")
        #expect(try JSONDecoder().decode(Answer.self, from: Data(response.body)).sha256 == sha256)
    }

    @Test("a server that grants a stream 1 KiB at a time gets the whole body")
    func tinyWindow() async throws {
        let (form, sha256, length, directory) = try await largeForm(size: 4_300_000)
        let response = try await withServer(window: 1024, action: { _ in .answer }) { _, client, url in
            try await client.upload(form, to: url)
        }
        withExtendedLifetime(directory) {}
        let answer = try JSONDecoder().decode(Answer.self, from: Data(response.body))
        #expect(answer.sha256 == sha256 && answer.length == length)
        // The first 65,535 bytes HTTP/2 allows before any grant, then 1 KiB per grant.
        #expect(answer.frames >= (length - 65_535) / 1024, "\(answer.frames) DATA frames")
    }

    @Test("while one large upload to an origin is on a connection of its own, another goes as a stream of AsyncHTTPClient's; once both are over, the next has a connection of its own again")
    func oneOwnConnectionPerOrigin() async throws {
        let (form, sha256, length, directory) = try await largeForm(size: 4_300_000)
        // Grants of 1 KiB after the first 64 KiB keep the first upload under way while the
        // second starts; 1 MiB frames allowed tell them apart: AsyncHTTPClient sends its first
        // window as one frame, FormPost's own connection 16 KiB frames.
        let (responses, requests) = try await withServer(window: 1024, maxFrameSize: 1 << 20, action: { _ in .answer }) { server, client, url in
            let first = Task { try await client.upload(form, to: url) }
            let waitStart = ContinuousClock.now
            while (server.requests.first?.bytes ?? 0) < 100_000, ContinuousClock.now - waitStart < .seconds(10) {
                try await Task.sleep(for: .milliseconds(5))
            }
            let second = try await client.upload(form, to: url)
            let firstResponse = try await first.value
            let third = try await client.upload(form, to: url, headers: [.userAgent: "third"])
            return ([firstResponse, second, third], server.requests)
        }
        withExtendedLifetime(directory) {}
        for response in responses {
            let answer = try JSONDecoder().decode(Answer.self, from: Data(response.body))
            #expect(answer.sha256 == sha256 && answer.length == length)
        }
        #expect(requests.count == 3)
        #expect(requests.first?.largestFrame == 16_384, "the first upload's largest frame: \(requests.first?.largestFrame ?? 0)")
        #expect((requests.dropFirst().first?.largestFrame ?? 0) > 16_384, "the second upload's largest frame: \(requests.dropFirst().first?.largestFrame ?? 0)")
        #expect(requests.last?.headers["user-agent"] == "third" && requests.last?.largestFrame == 16_384)
    }

    @Test("a stream the server resets mid-body (INTERNAL_ERROR) fails with a clear error, and is not sent again")
    func resetMidBody() async throws {
        let (form, _, _, directory) = try await largeForm(size: 5_000_000)
        let (error, requests) = try await withServer(window: 1 << 20, action: { _ in .reset(afterBytes: 1_000_000, code: .internalError) }) { server, client, url in
            do {
                _ = try await client.upload(form, to: url)
                return (nil as (any Error)?, server.requests.count)
            } catch {
                return (error, server.requests.count)
            }
        }
        withExtendedLifetime(directory) {}
        guard case UploadError.transport(let reason)? = error as? UploadError else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("reset the HTTP/2 stream") && reason.contains("Internal Error"), "\(reason)")
        #expect(requests == 1)
    }

    @Test("a stream refused mid-body (REFUSED_STREAM) and a connection ended by GOAWAY before its stream was taken are sent again from the plan on a new connection, and arrive whole",
          arguments: [HTTP2TestServer.Action.reset(afterBytes: 500_000, code: .refusedStream), .goAway])
    func notTakenIsSentAgain(refusal: HTTP2TestServer.Action) async throws {
        let (form, sha256, length, directory) = try await largeForm(size: 5_000_000)
        let (response, connections, requests) = try await withServer(window: 1 << 20, action: { $0 == 0 ? refusal : .answer }) { server, client, url in
            (try await client.upload(form, to: url), server.connections, server.requests)
        }
        withExtendedLifetime(directory) {}
        let answer = try JSONDecoder().decode(Answer.self, from: Data(response.body))
        #expect(answer.sha256 == sha256 && answer.length == length)
        #expect(connections == 2)
        #expect(requests.count == 2 && requests.last?.ended == true)
    }

    @Test("a final answer before the body (413) is the response, and the upload stops sending")
    func answerBeforeTheBody() async throws {
        let (form, _, length, directory) = try await largeForm(size: 8_000_000)
        let (response, received) = try await withServer(window: 16 << 20, action: { _ in .answerAtOnce(status: 413) }) { server, client, url in
            let response = try await client.upload(form, to: url)
            try await Task.sleep(for: .milliseconds(200))
            return (response, server.requests.first?.bytes ?? -1)
        }
        withExtendedLifetime(directory) {}
        #expect(response.status == 413)
        #expect(received < length)
    }

    // The server never answers, so only the cancellation can end the upload: the time limit
    // bounds a hang, and what is asserted is the mechanism (the cancellation error, the
    // connection closed), not a duration a loaded machine can stretch.
    // Three minutes: a full run beside a clean build of the package (both cores busy) once
    // took longer than one, making the certificates, the form and the connection included.
    @Test("cancelling an upload whose answer never comes ends it and closes its connection", .timeLimit(.minutes(3)))
    func cancellation() async throws {
        let (form, _, length, directory) = try await largeForm(size: 5_000_000)
        let (outcome, closed) = try await withServer(window: 16 << 20, action: { _ in .hold }) { server, client, url in
            let upload = Task { try await client.upload(form, to: url) }
            let waitStart = ContinuousClock.now
            while server.requests.first?.bytes != length, ContinuousClock.now - waitStart < .seconds(20) {
                try await Task.sleep(for: .milliseconds(20))
            }
            let cancelled = ContinuousClock.now
            upload.cancel()
            let outcome = await upload.result
            while server.closedConnections == 0, ContinuousClock.now - cancelled < .seconds(20) {
                try await Task.sleep(for: .milliseconds(10))
            }
            return (outcome, server.closedConnections)
        }
        withExtendedLifetime(directory) {}
        guard case .failure(let error) = outcome else {
            Issue.record("the upload was not cancelled: \(outcome)")
            return
        }
        #expect(error is CancellationError, "\(error)")
        #expect(closed == 1, "the server saw \(closed) connections closed")
    }

    // The waits bound hangs. The stream is read by a task of the cooperative pool, which
    // has a thread per core and takes none more while they block: a full run of the suites
    // on 2 cores, beside a busy process, kept both busy for more than 50 s (the iteration not
    // yet made, the server holding the part's head).
    @Test("cancelling an upload whose stream part waits for bytes ends the stream's iteration too, on FormPost's own HTTP/2 connection",
          .timeLimit(.minutes(5)))
    func cancelledWhileAStreamWaits() async throws {
        let live = LiveStream()
        var form = MultipartForm()
        form.append(name: "live", length: nil, filename: "live.bin") { live }
        let liveForm = form
        let (outcome, waited, allEnded, seen) = try await withServer(window: 16 << 20, action: { _ in .hold }) { server, client, url in
            let uploadEnd = Mutex<String?>(nil)
            let upload = Task {
                do {
                    let response = try await client.upload(liveForm, to: url)
                    uploadEnd.withLock { $0 = "answered \(response.status)" }
                    return response
                } catch {
                    uploadEnd.withLock { $0 = "failed: \(error)" }
                    throw error
                }
            }
            let waitStart = ContinuousClock.now
            while !live.hasWaited, uploadEnd.withLock({ $0 == nil }), ContinuousClock.now - waitStart < .seconds(150) {
                try await Task.sleep(for: .milliseconds(5))
            }
            let seen = "iterations made and ended \(live.counts); the server saw \(server.connections) connections, "
                + "requests with \(server.requests.map(\.bytes)) bytes; the upload "
                + (uploadEnd.withLock { $0 }.map { "had ended, before the stream waited: \($0)" } ?? "was going on")
            upload.cancel()
            let outcome = await upload.result
            let ended = ContinuousClock.now
            while !live.allEnded, ContinuousClock.now - ended < .seconds(100) { try await Task.sleep(for: .milliseconds(10)) }
            return (outcome, live.hasWaited, live.allEnded, seen)
        }
        #expect(waited, "the upload never read past the stream's first chunk: \(seen)")
        guard case .failure = outcome else {
            Issue.record("the upload was not cancelled: \(outcome)")
            return
        }
        #expect(allEnded, "iterations made and ended: \(live.counts), 100 s after the upload ended")
    }

    @Test("formpost and the library upload 6 MB over HTTP/2 to formpost serve's receiver over TLS, byte-exact")
    func toFormPostServe() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let directory = try SampleDirectory()
        let path = try directory.file("photo.bin", size: 6_000_000, seed: 8)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        var form = MultipartForm()
        form.append(name: "title", value: "hi")
        try form.append(name: "photo", fileAt: path)
        let sending = form
        let (command, library) = try await withTLSReceiver(fixtures) { port in
            let url = "https://localhost:\(port)/upload"
            let command = try await offPool { try formpost(["-s", "--cacert", fixtures.caPath, "--http2", "-F", "title=hi", "-F", "photo=@\(path)", url]) }
            #expect(command.status == 0, "\(command.stderr)")
            let configuration = HTTPClient.Configuration(trusting: fixtures.caPath)
            let library = try await withTransport(configuration) { transport in
                try await FormPostClient(transport: transport).upload(sending, to: URL(string: url)!)
            }
            return (command.stdout, library)
        }
        #expect(library.httpVersion == "2")
        for answer in [command, Data(library.body)] {
            let receipt = try JSONDecoder().decode(Receipt.self, from: answer)
            #expect(receipt.fields == [.init(name: "title", value: "hi")])
            #expect(receipt.files.map(\.sha256) == [expected])
        }
    }

    // The upload has no timeout of its own: without the handshake's limit it would wait for as
    // long as the server holds the connection. The time limit bounds that hang; the error says
    // which limit ended it.
    @Test("a server that takes the connection and never answers the TLS handshake fails the upload after the connect timeout",
          .timeLimit(.minutes(3)))
    func stalledHandshake() async throws {
        let (form, _, _, directory) = try await largeForm(size: 4_300_000)
        // Accepts connections and reads nothing from them.
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        defer { listener.close(promise: nil) }
        var configuration = HTTPClient.Configuration()
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(1))
        let url = URL(string: "https://localhost:\(listener.localAddress?.port ?? 0)/upload")!
        let outcome = try await withTransport(configuration) { transport in
            do {
                return Result<UploadResponse, any Error>.success(try await FormPostClient(transport: transport).upload(form, to: url))
            } catch {
                return .failure(error)
            }
        }
        withExtendedLifetime(directory) {}
        guard case .failure(UploadError.timedOut(let what)) = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
        #expect(what.contains("connecting"), "\(what)")
    }

    @Test("a Host field the caller sets names the authority, as AsyncHTTPClient makes it")
    func hostField() async throws {
        let (form, sha256, _, directory) = try await largeForm(size: 4_300_000)
        let (response, request) = try await withServer(action: { _ in .answer }) { server, client, url in
            (try await client.upload(form, to: url, headers: [HTTPField.Name("Host")!: "uploads.example"]), server.requests.first)
        }
        withExtendedLifetime(directory) {}
        #expect(try JSONDecoder().decode(Answer.self, from: Data(response.body)).sha256 == sha256)
        #expect(request?.headers[":authority"] == "uploads.example")
        #expect(request?.headers["host"] == nil)
        #expect(request?.largestFrame == 16_384)
    }

    // The server never answers: only the upload's own timeout can end it (the time limit bounds
    // the hang), and the error says so.
    @Test("the upload's timeout ends an exchange whose answer never comes", .timeLimit(.minutes(1)))
    func timeout() async throws {
        let (form, _, _, directory) = try await largeForm(size: 5_000_000)
        var options = UploadOptions()
        options.timeout = .seconds(1)
        let sending = options
        let outcome = try await withServer(window: 16 << 20, action: { _ in .hold }) { _, client, url in
            do {
                return Result<UploadResponse, any Error>.success(try await client.upload(form, to: url, options: sending))
            } catch {
                return .failure(error)
            }
        }
        withExtendedLifetime(directory) {}
        guard case .failure(UploadError.timedOut) = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
    }
}

#endif
