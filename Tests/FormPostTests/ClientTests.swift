import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormPost
import FormPostFoundation
import FormPostURLSession
import FormPostServer
import Multipart
import Synchronization
import Testing

@Suite("Client against a real server")
struct ClientTests {
    let client = FormPostClient()

    @Test("every strategy delivers the exact bytes of the plan", arguments: [
        EncodingStrategy.default, .inMemory, .streaming, .temporaryFile, .automatic(threshold: 0),
    ])
    func byteExact(strategy: EncodingStrategy) async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory)
        let expected = sha256Hex(try await form.plan().encodedData())
        let server = try TestServer()
        let digest = try await server.run { base in
            try await client.upload(form, to: base.appendingPathComponent("digest"), strategy: strategy).decode(Digest.self)
        }
        #expect(digest == Digest(length: Int(form.contentLength!), sha256: expected, contentType: form.contentType, method: "POST"))
    }

    @Test("the URLSession transport delivers the exact bytes too, in memory and streamed", arguments: [Int64(10_000_000), 0])
    func urlSessionByteExact(inMemoryLimit: Int64) async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 3_000_000)
        let expected = sha256Hex(try await form.plan().encodedData())
        let transport = URLSessionTransport(inMemoryLimit: inMemoryLimit)
        defer { transport.invalidate() }
        let seen = Mutex<[UploadProgress]>([])
        let server = try TestServer()
        let digest = try await server.run { base in
            try await FormPostClient(transport: transport).upload(form, to: base.appendingPathComponent("digest"), strategy: .streaming) { progress in
                seen.withLock { $0.append(progress) }
            }.validate().decode(Digest.self)
        }
        #expect(digest == Digest(length: Int(form.contentLength!), sha256: expected, contentType: form.contentType, method: "POST"))
        #expect(seen.withLock { $0.last?.bytesSent } == form.contentLength)
    }

    @Test("the URLSession transport uploads from files, as background sessions need: forms through a temporary file it removes, raw files as they are")
    func urlSessionFromFile() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 3_000_000)
        let expected = sha256Hex(try await form.plan().encodedData())
        let raw = try directory.file("raw.bin", size: 2_000_000, seed: 9)
        let transport = URLSessionTransport(uploadsFromFile: true)
        defer { transport.invalidate() }
        let client = FormPostClient(transport: transport)
        let temporaryBefore = try Self.temporaryBodies()
        let server = try TestServer()
        let (formDigest, rawDigest) = try await server.run { base in
            let digest = base.appendingPathComponent("digest")
            return (try await client.upload(form, to: digest, strategy: .streaming).validate().decode(Digest.self),
                    try await client.send(try .file(path: raw), to: digest, method: .put).validate().decode(Digest.self))
        }
        #expect(formDigest == Digest(length: Int(form.contentLength!), sha256: expected, contentType: form.contentType, method: "POST"))
        #expect(rawDigest.sha256 == sha256Hex(try Data(contentsOf: URL(fileURLWithPath: raw))) && rawDigest.method == "PUT")
        #expect(try await Self.temporaryBodiesLeft(since: temporaryBefore).isEmpty)
        #expect(FileManager.default.fileExists(atPath: raw))
    }

    /// The temporary body files (`formpost-*` ending in `suffix`) present now.
    static func temporaryBodies(suffix: String = ".body") throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("formpost-") && $0.hasSuffix(suffix) })
    }

    /// The temporary body files ending in `suffix` made since `before` that are still there
    /// after those of the tests running beside this one have gone (they remove their own
    /// when they end): waits up to 5 s for the others.
    static func temporaryBodiesLeft(since before: Set<String>, suffix: String = ".body") async throws -> Set<String> {
        var left = try temporaryBodies(suffix: suffix).subtracting(before)
        for _ in 0..<50 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            left = try temporaryBodies(suffix: suffix).subtracting(before)
        }
        return left
    }

    @Test("the URLSession transport re-sends a streamed body on 307 and reports refused connections")
    func urlSessionRedirect() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 3_000_000)
        let expected = sha256Hex(try await form.plan().encodedData())
        let transport = URLSessionTransport(inMemoryLimit: 0)
        defer { transport.invalidate() }
        let client = FormPostClient(transport: transport)
        let server = try TestServer()
        let digest = try await server.run { base in
            try await client.upload(form, to: URL(string: "\(base)/redirect/307?to=/digest")!, strategy: .streaming).validate().decode(Digest.self)
        }
        #expect(digest.sha256 == expected && digest.method == "POST")
        await #expect(throws: UploadError.self) { try await client.send(nil, to: URL(string: "http://127.0.0.1:1/")!, method: .get) }
    }

    @Test("the receiver stores what was sent, PUT and PATCH too", arguments: [RequestMethod.post, .put, .patch])
    func receiverRoundTrip(method: RequestMethod) async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 2_000_000)
        let server = try TestServer()
        let response = try await server.run { base in
            try await client.upload(form, to: base.appendingPathComponent("upload"), method: method, strategy: .streaming)
        }
        if method != .post {
            #expect(response.status == 405)
            return
        }
        let receipt = try response.validate(contentTypes: ["application/json"]).decode(Receipt.self)
        #expect(receipt.fields == [.init(name: "title", value: "Hello ✓")])
        #expect(receipt.files.map(\.filename) == ["blob.bin", "sample.dat"])
        let fileBytes = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/sample.dat"))
        #expect(receipt.files[1].sha256 == sha256Hex(fileBytes))
        #expect(receipt.files[0].sha256 == sha256Hex([0, 1, 2, 255] as [UInt8]))
        let stored = try Data(contentsOf: URL(fileURLWithPath: server.directory + "/" + receipt.files[1].storedAs))
        #expect(stored == fileBytes)
    }

    @Test("GET and HEAD are refused for a form before anything is sent", arguments: [RequestMethod.get, .head])
    func refusesGet(method: RequestMethod) async throws {
        await #expect(throws: UploadError.self) {
            try await client.upload(MultipartForm(), to: URL(string: "http://127.0.0.1:9/")!, method: method)
        }
    }

    @Test("progress rises monotonically and ends at the total")
    func progress() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 8_000_000)
        let seen = Mutex<[UploadProgress]>([])
        let server = try TestServer()
        _ = try await server.run { base in
            try await client.upload(form, to: base.appendingPathComponent("slow"), strategy: .streaming) { progress in
                seen.withLock { $0.append(progress) }
            }
        }
        let values = seen.withLock { $0 }
        #expect(values.count >= 2)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent })
        #expect(values.last == UploadProgress(bytesSent: form.contentLength!, totalBytes: form.contentLength!))
        #expect(values.last?.fraction == 1)
    }

    @Test("a small form encoded in memory goes in one write, arrives byte-exact, and reports its whole length as sent")
    func smallFormInOneWrite() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 4096)
        let expected = sha256Hex(try await form.plan().encodedData())
        let seen = Mutex<[UploadProgress]>([])
        let server = try TestServer()
        let digest = try await server.run { base in
            try await client.upload(form, to: base.appendingPathComponent("digest")) { progress in
                seen.withLock { $0.append(progress) }
            }.validate().decode(Digest.self)
        }
        #expect(form.contentLength! <= 128 << 10)
        #expect(digest.sha256 == expected && digest.length == Int(form.contentLength!))
        #expect(seen.withLock { $0.last } == UploadProgress(bytesSent: form.contentLength!, totalBytes: form.contentLength!))
    }

    @Test("progress as an AsyncStream ends at the total")
    func progressStream() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory)
        let server = try TestServer()
        let last = try await server.run { base in
            let (progress, response) = client.uploadTask(form, to: base.appendingPathComponent("digest"))
            var last: UploadProgress?
            for await value in progress { last = value }
            _ = try await response.value
            return last
        }
        #expect(last?.bytesSent == form.contentLength)
    }

    @Test("cancelling the task aborts the upload promptly and removes the temporary file")
    func cancellation() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 64_000_000)
        let server = try TestServer()
        let before = try Self.temporaryBodies(suffix: ".multipart")
        try await server.run { base in
            let started = Mutex(false)
            let task = Task {
                try await client.upload(form, to: base.appendingPathComponent("slow"), strategy: .temporaryFile) { _ in
                    started.withLock { $0 = true }
                }
            }
            while !started.withLock({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
            let clock = ContinuousClock()
            let cancelledAt = clock.now
            task.cancel()
            let result = await task.result
            #expect(throws: (any Error).self) { try result.get() }
            #expect(clock.now - cancelledAt < .seconds(5))
        }
        let left = try await Self.temporaryBodiesLeft(since: before, suffix: ".multipart")
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test("503 with Retry-After is retried, re-sending the whole body")
    func retries() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory)
        let expected = sha256Hex(try await form.plan().encodedData())
        let server = try TestServer()
        let digest = try await server.run { base in
            try await client.upload(form, to: base.appendingPathComponent("flaky"), strategy: .streaming,
                                    options: UploadOptions(retry: RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(10)))).validate().decode(Digest.self)
        }
        #expect(digest.sha256 == expected)
        #expect(server.flakyCount.withLock { $0 } == 3)
        let noRetry = try TestServer()
        let status = try await noRetry.run { base in try await client.upload(form, to: base.appendingPathComponent("flaky")).status }
        #expect(status == 503)
    }

    @Test("307 and 308 re-send the body from the plan; 303 and 302 turn a POST into a bodiless GET", arguments: [307, 308, 303, 302])
    func redirects(code: Int) async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 3_000_000)
        let expected = sha256Hex(try await form.plan().encodedData())
        let server = try TestServer()
        let digest = try await server.run { base in
            try await client.upload(form, to: URL(string: "\(base)/redirect/\(code)?to=/digest")!, strategy: .streaming).validate().decode(Digest.self)
        }
        if code == 307 || code == 308 {
            #expect(digest == Digest(length: Int(form.contentLength!), sha256: expected, contentType: form.contentType, method: "POST"))
        } else {
            #expect(digest.method == "GET" && digest.length == 0 && digest.contentType == "")
        }
    }

    @Test("a server that answers 413 early is reported, not hung on")
    func earlyRejection() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 50_000_000)
        let server = try TestServer()
        let outcome: Result<Int, any Error> = try await server.run { base in
            do {
                return .success(try await client.upload(form, to: base.appendingPathComponent("reject"), strategy: .streaming, options: UploadOptions(timeout: .seconds(20))).status)
            } catch {
                return .failure(error)
            }
        }
        // The answer, or a connection error (the server closes while the body is still being
        // sent): either is a report. A time-out is what "hung on" means, so it fails the test.
        switch outcome {
        case .success(let status): #expect(status == 413)
        case .failure(UploadError.timedOut(let what)): Issue.record("the client hung on until its time limit: \(what)")
        case .failure(let error): #expect(error is UploadError, "\(error)")
        }
    }

    @Test("a file that changes size before or while it is sent by sendfile stops the upload with an error naming it")
    func fileChangedDuringZeroCopy() async throws {
        let directory = try SampleDirectory()
        let before = try directory.file("before.bin", size: 1_000_000)
        var form = MultipartForm()
        try form.append(name: "doc", fileAt: before)
        try Data(count: 10).write(to: URL(fileURLWithPath: before))
        let during = directory.path + "/during.bin"
        _ = FileManager.default.createFile(atPath: during, contents: nil)
        truncate(during, 60_000_000)
        var large = MultipartForm()
        try large.append(name: "big", fileAt: during)
        let server = try TestServer()
        let (beforeError, duringError, seconds) = try await server.run { [form, large] base -> (String, String, Double) in
            var first = ""
            do { _ = try await client.upload(form, to: base.appendingPathComponent("digest"), strategy: .streaming) } catch { first = String(describing: error) }
            let started = Date()
            let shrink = Task {
                try await Task.sleep(nanoseconds: 300_000_000)
                truncate(during, 1_000_000)
            }
            var second = ""
            do {
                _ = try await client.upload(large, to: base.appendingPathComponent("slow"), strategy: .streaming, options: UploadOptions(timeout: .seconds(60)))
            } catch {
                second = String(describing: error)
            }
            _ = try await shrink.value
            return (first, second, Date().timeIntervalSince(started))
        }
        #expect(beforeError.contains("before.bin") && beforeError.contains("1000000"), "\(beforeError)")
        #expect(duringError.contains("during.bin") && duringError.contains("60000000"), "\(duringError)")
        #expect(seconds < 30, "\(duringError)")
    }

    @Test("raw bytes, files and streams upload byte-exact")
    func rawUploads() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("raw.bin", size: 1_234_567)
        let fileBytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let server = try TestServer()
        try await server.run { base in
            let url = base.appendingPathComponent("digest")
            let fromFile = try await client.send(try RequestBody.file(path: path), to: url, method: .put).decode(Digest.self)
            #expect(fromFile == Digest(length: fileBytes.count, sha256: sha256Hex(fileBytes), contentType: "application/octet-stream", method: "PUT"))
            let fromBytes = try await client.send(.bytes(Array("hello".utf8), contentType: "text/plain"), to: url).decode(Digest.self)
            #expect(fromBytes.sha256 == sha256Hex(Array("hello".utf8)) && fromBytes.contentType == "text/plain")
            let fromURL = try await client.send(try .file(url: URL(fileURLWithPath: path)), to: url).decode(Digest.self)
            #expect(fromURL.sha256 == sha256Hex(fileBytes) && fromURL.length == fileBytes.count)
            let fromInputStream = try await client.send(.inputStream(InputStream(data: fileBytes), length: Int64(fileBytes.count)), to: url).decode(Digest.self)
            #expect(fromInputStream.sha256 == sha256Hex(fileBytes))
            let chunks = [Array(fileBytes.prefix(1000)), Array(fileBytes.dropFirst(1000))]
            let fromStream = try await client.send(.stream(length: nil) { Chunks(chunks: chunks) }, to: url).decode(Digest.self)
            #expect(fromStream.sha256 == sha256Hex(fileBytes) && fromStream.length == fileBytes.count)
            let oneShot = RequestBody.inputStream(InputStream(data: fileBytes), length: Int64(fileBytes.count))
            // The server reads the body before it answers, so the first send has used the
            // stream up: whether an answer that comes first leaves some of it unread is a race.
            let redirected = try? await client.send(oneShot, to: URL(string: "\(base)/redirect/307?to=/digest&read=1")!)
            #expect(redirected == nil, "a one-shot body cannot follow a 307: the second send must fail")
        }
    }

    @Test("a stream part without a length goes chunked and arrives intact")
    func chunkedStream() async throws {
        var form = MultipartForm()
        let chunks: [[UInt8]] = (0..<20).map { [UInt8](repeating: UInt8($0), count: 70_000) }
        form.append(name: "stream", length: nil, filename: "s.bin") {
            AsyncStream<[UInt8]> { continuation in
                for chunk in chunks { continuation.yield(chunk) }
                continuation.finish()
            }
        }
        #expect(form.contentLength == nil)
        let server = try TestServer()
        let streamForm = form
        let receipt = try await server.run { base in
            try await client.upload(streamForm, to: base.appendingPathComponent("upload")).validate().decode(Receipt.self)
        }
        #expect(receipt.files.first?.size == 1_400_000)
        #expect(receipt.files.first?.sha256 == sha256Hex(chunks.flatMap { $0 }))
    }

    @Test("cancelling an upload whose stream part waits for bytes ends the stream's iteration too, not only the upload, on both transports",
          .timeLimit(.minutes(1)), arguments: ["ahc", "urlsession"])
    func cancelledWhileAStreamWaits(transportName: String) async throws {
        let client = FormPostClient(transport: transport(named: transportName))
        let live = LiveStream()
        var form = MultipartForm()
        form.append(name: "live", length: nil, filename: "live.bin") { live }
        let server = try TestServer()
        let liveForm = form
        try await server.run { base in
            let task = Task { try await client.upload(liveForm, to: base.appendingPathComponent("upload")) }
            let waitStart = ContinuousClock.now
            while !live.hasWaited, ContinuousClock.now - waitStart < .seconds(20) { try await Task.sleep(for: .milliseconds(5)) }
            #expect(live.hasWaited, "the upload never read past the stream's first chunk")
            task.cancel()
            await #expect(throws: (any Error).self) { try await task.value }
            let ended = ContinuousClock.now
            while !live.allEnded, ContinuousClock.now - ended < .seconds(20) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(live.allEnded, "iterations made and ended: \(live.counts), 20 s after the upload ended")
        }
    }

    @Test("the rate limit holds the average rate under the cap")
    func rateLimit() async throws {
        let server = try TestServer()
        let form = { () -> MultipartForm in
            var form = MultipartForm()
            form.append(name: "d", bytes: [UInt8](repeating: 1, count: 400_000))
            return form
        }()
        let clock = ContinuousClock()
        let elapsed = try await server.run { base in
            try await clock.measure {
                _ = try await client.upload(form, to: base.appendingPathComponent("digest"), strategy: .streaming, options: UploadOptions(maxBytesPerSecond: 1_000_000))
            }
        }
        #expect(elapsed >= .milliseconds(300))
    }

    @Test("connection refused and bad URLs are clear errors")
    func connectionErrors() async throws {
        let error = await #expect(throws: UploadError.self) {
            try await client.send(nil, to: URL(string: "http://127.0.0.1:1/")!, method: .get)
        }
        guard case .cannotConnect(let host, let port, _) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && port == 1)
        await #expect(throws: UploadError.self) { try await client.send(nil, to: URL(string: "ftp://x/")!, method: .get) }
    }

    @Test("an S3-style presigned POST sends fields first and the file last")
    func presignedPost() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("photo.jpg", size: 1000)
        let post = PresignedPost(url: URL(string: "http://unused/")!, fields: [("key", "uploads/photo.jpg"), ("policy", "abc"), ("x-amz-signature", "sig")])
        let form = try post.form(fileAt: path)
        #expect(form.parts.count == 4)
        let server = try TestServer()
        let receipt = try await server.run { base in
            try await PresignedPost(url: base.appendingPathComponent("upload"), fields: post.fields).upload(fileAt: path).decode(Receipt.self)
        }
        #expect(receipt.fields.map(\.name) == ["key", "policy", "x-amz-signature"])
        #expect(receipt.files.map(\.name) == ["file"])
    }
}

@Suite("Progress reporting")
struct ProgressReporterTests {
    @Test("counting from many threads at once neither traps nor loses a byte")
    func concurrentAdds() {
        let reports = Mutex(0)
        let reporter = ProgressReporter(total: nil, interval: 0) { _ in reports.withLock { $0 += 1 } }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<50_000 { reporter.add(1) }
        }
        #expect(reporter.bytesSent == 400_000)
        #expect(reports.withLock { $0 } > 0)
    }
}

@Suite("Response size cap")
struct ResponseSizeCapTests {
    @Test("a response over the cap is one error on both transports, with or without a request body", arguments: ["ahc", "urlsession"])
    func tooLarge(transportName: String) async throws {
        let client = FormPostClient(transport: transport(named: transportName))
        let server = try TestServer()
        let outcomes = try await server.run { base in
            let url = URL(string: "\(base)/reply?status=200&type=text/plain&body64=" + Data(repeating: 0x41, count: 5000).base64EncodedString())!
            var outcomes: [String] = []
            for body in [nil, RequestBody.bytes(Array(repeating: 1, count: 100_000))] {
                do {
                    let response = try await client.send(body, to: url, method: body == nil ? .get : .post, options: UploadOptions(maxResponseBytes: 1000))
                    outcomes.append("answered \(response.body.count) bytes")
                } catch {
                    outcomes.append(String(describing: error))
                }
            }
            return outcomes
        }
        #expect(outcomes == Array(repeating: UploadError.responseTooLarge(limit: 1000).description, count: 2))
    }
}

@Suite("Cancellation before sending")
struct CancelledBeforeSendingTests {
    @Test("a task cancelled before it sends sends nothing, on both transports", arguments: ["ahc", "urlsession"])
    func cancelledFirst(transportName: String) async throws {
        let client = FormPostClient(transport: transport(named: transportName))
        let server = try TestServer()
        let outcome = try await server.run { base in
            let task = Task { () -> String in
                withUnsafeCurrentTask { $0?.cancel() }
                do {
                    return "answered \(try await client.send(.bytes([1, 2, 3]), to: base.appendingPathComponent("flaky")).status)"
                } catch {
                    return String(describing: type(of: error))
                }
            }
            let outcome = await task.value
            try await Task.sleep(for: .milliseconds(300))
            return outcome
        }
        #expect(outcome == "CancellationError")
        #expect(server.flakyCount.withLock { $0 } == 0, "the server received the request")
    }
}

/// The shared AsyncHTTPClient transport (`ahc`) or a new URLSession one (`urlsession`).
func transport(named name: String) -> any UploadTransport {
    name == "ahc" ? AsyncHTTPClientTransport.shared : URLSessionTransport()
}

@Suite("Transport lifecycles")
struct TransportLifecycleTests {
    @Test("shutting down the shared transport leaves it working for everyone else")
    func sharedSurvivesShutdown() async throws {
        try await AsyncHTTPClientTransport.shared.shutdown()
        let server = try TestServer()
        let status = try await server.run { base in
            try await FormPostClient(transport: AsyncHTTPClientTransport.shared).send(.bytes([1]), to: base.appendingPathComponent("digest")).status
        }
        #expect(status == 200)
    }
}
