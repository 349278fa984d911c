import Foundation
import FormPost
import FormPostServer
import HTTPTypes
import Hummingbird
import Logging
import Multipart
import Synchronization
import Testing

/// Events that cannot block each other or grow without bound: each retried on its own
/// schedule and given up on past its bound, the outbox bounded in count and bytes (the
/// upload answered 503 past it), each event summarised past its size.
extension UploadEventTests {
    /// The events a hook was posted, in order, each with the status it answered.
    final class PostedEvents: Sendable {
        let posts = Mutex<[(path: String, id: String, status: Int)]>([])
    }

    /// Runs `body` with the port of a hook on 127.0.0.1 (`POST /events`) that answers 413 to
    /// the events of uploads on `refusedPath` and 204 to the others.
    static func withRefusingHook<T: Sendable>(_ posted: PostedEvents, refusing refusedPath: String, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router(context: BasicRequestContext.self)
        router.post("events") { request, _ -> Response in
            let data = Data(buffer: try await request.body.collect(upTo: 4 << 20))
            let event = try? JSONDecoder().decode(UploadEvent.self, from: data)
            let status: HTTPResponse.Status = event?.upload.path == refusedPath ? .contentTooLarge : .noContent
            posted.posts.withLock { $0.append((event?.upload.path ?? "?", event?.id ?? "?", status.code)) }
            return Response(status: status)
        }
        return try await whileServing(router, body)
    }

    static func upload(_ path: String) -> UploadEvent.Upload {
        UploadEvent.Upload(protocol: .multipart, method: "POST", path: path, client: "127.0.0.1", receipt: Receipt(fields: [.init(name: "t", value: path)]))
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }

    @Test("an event the hook refuses (413) does not hold back the events after it: each is posted once, in order, right after the refused one's first attempt, long before its retry; the refused one keeps its schedule beside it (attempts 1)",
          .timeLimit(.minutes(2)))
    func refusedEventDoesNotBlock() async throws {
        let sample = try SampleDirectory()
        let outbox = try UploadEventOutbox(directory: sample.path + "/events")
        let refused = try await outbox.record(UploadEvent.postFinish, upload: Self.upload("/x"))
        let second = try await outbox.record(UploadEvent.postFinish, upload: Self.upload("/b"))
        let third = try await outbox.record(UploadEvent.postFinish, upload: Self.upload("/c"))
        let posted = PostedEvents()
        try await Self.withRefusingHook(posted, refusing: "/x") { hookPort in
            let hook = UploadEventHook(url: "http://127.0.0.1:\(hookPort)/events", timeout: .seconds(30))
            var delivery = UploadEventDelivery(outbox: outbox, deliver: hook.deliver)
            // The refused event's retry is far off: the others must not wait for it.
            delivery.firstRetryDelay = .seconds(60)
            delivery.maxRetryDelay = .seconds(60)
            delivery.logger = Self.quietLogger
            let running = delivery
            let task = Task { await running.run() }
            defer { task.cancel() }
            #expect(try await Self.eventually(60) { posted.posts.withLock { $0.count } >= 3 }, "\(posted.posts.withLock { $0 })")
            let posts = posted.posts.withLock { $0 }
            #expect(posts.map(\.id) == [refused.id, second.id, third.id], "\(posts)")
            #expect(posts.map(\.status) == [413, 204, 204], "\(posts)")
            #expect(try await Self.eventually(30) {
                ((try? FileManager.default.contentsOfDirectory(atPath: outbox.directory)) ?? []).sorted() == [refused.id + ".json", refused.id + ".retry"]
            }, "\((try? FileManager.default.contentsOfDirectory(atPath: outbox.directory)) ?? [])")
            let schedule = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: outbox.directory + "/" + refused.id + ".retry"))) as? [String: Any]
            #expect(schedule?["attempts"] as? Int == 1, "\(String(describing: schedule))")
            task.cancel()
            await task.value
        }
    }

    @Test("formpost serve --events-max-attempts 2: an event the hook keeps refusing (413) is given up on after its second attempt, moved with its schedule to dead/ in the outbox, logged at error level and counted in formpost_events_dead_lettered_total; the next event is delivered",
          .timeLimit(.minutes(2)))
    func deadLettered() async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads", outbox = uploads + "/.events"
        let file = try sample.file("a.bin", size: 1000, seed: 9)
        let posted = PostedEvents()
        try await Self.withRefusingHook(posted, refusing: "/refused") { hookPort in
            let port = try freePort()
            let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", uploads, "--metrics",
                                                           "--hook-url", "http://127.0.0.1:\(hookPort)/events", "--hook-events", "post-finish",
                                                           "--hook-timeout", "30", "--events-max-attempts", "2"], stdout: .discard, stderr: .capture)
            try await RawSocket.waitForListener(port: port, attempts: 800)
            let (refused, taken) = try await offPool {
                (try SignedUploadServeTests.curl(["-F", "f=@" + file, "http://127.0.0.1:\(port)/refused"]),
                 try SignedUploadServeTests.curl(["-F", "f=@" + file, "http://127.0.0.1:\(port)/taken"]))
            }
            #expect(refused.status == 200 && taken.status == 200, "\(refused.body) \(taken.body)")
            let dead = outbox + "/dead"
            #expect(try await Self.eventually(60) { ((try? FileManager.default.contentsOfDirectory(atPath: dead)) ?? []).count == 2 }, "nothing in \(dead)")
            let deadFiles = try FileManager.default.contentsOfDirectory(atPath: dead).sorted()
            #expect(deadFiles.first?.hasSuffix(".json") == true && deadFiles.last?.hasSuffix(".retry") == true, "\(deadFiles)")
            let deadEvent = try JSONDecoder().decode(UploadEvent.self, from: Data(contentsOf: URL(fileURLWithPath: dead + "/" + (deadFiles.first ?? ""))))
            #expect(deadEvent.upload.path == "/refused")
            let posts = posted.posts.withLock { $0 }
            #expect(posts.filter { $0.path == "/refused" }.count == 2, "\(posts)")
            #expect(posts.filter { $0.path == "/taken" }.map(\.status) == [204], "\(posts)")
            #expect(try await Self.eventually(30) {
                ((try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? []).filter { $0 != "dead" }.isEmpty
            }, "\((try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? [])")
            let metrics = try await offPool { try Subprocess.run("curl", ["-sS", "http://127.0.0.1:\(port)/metrics"]) }
            #expect(metrics.contains("# TYPE formpost_events_dead_lettered_total counter"), "\(metrics)")
            #expect(metrics.split(separator: "\n").contains(#"formpost_events_dead_lettered_total{event="post-finish"} 1"#), "\(metrics)")
            server.stop()
            let logged = String(decoding: try await offPool { try server.finish(timeout: 30) }.stderr, as: UTF8.self)
            let gaveUp = logged.split(separator: "\n").filter { $0.contains("gave up delivering post-finish \(deadEvent.id) after 2 attempt(s)") }
            #expect(gaveUp.count == 1 && gaveUp.allSatisfy { $0.contains(" error formpost.events:") && $0.contains("answered 413") }, "\(logged)")
        }
    }

    /// A bound of the outbox, and the fields of the forms sent against it.
    enum OutboxBound: String, CaseIterable, Sendable {
        case count, bytes
    }

    @Test("an outbox at its bound (count, bytes) refuses the next upload's event: the form is answered 503 with Retry-After and its file removed; uploads whose events fit are stored",
          .timeLimit(.minutes(2)), arguments: OutboxBound.allCases)
    func outboxBounded(_ bound: OutboxBound) async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads"
        var configuration = ReceiverConfiguration(directory: uploads)
        let outbox = switch bound {
        case .count: try UploadEventOutbox(directory: sample.path + "/events", maxCount: 2)
        case .bytes: try UploadEventOutbox(directory: sample.path + "/events", maxBytes: 1000)
        }
        configuration.events = outbox
        let receiver = try UploadReceiver(configuration: configuration, logger: Self.quietLogger)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical)
        let file = try sample.file("a.bin", size: 2000, seed: 10)
        let stored = { @Sendable in ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter { !$0.hasPrefix(".") } }
        // By count: the third form is one too many. By bytes: the second form's long value
        // does not fit beside the first one's event, the third's short one does.
        let values = bound == .count ? [10, 10, 10] : [100, 600, 10]
        let answers = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            try await offPool {
                try values.map { length in
                    let answer = try SignedUploadServeTests.curl(["-i", "-F", "t=" + String(repeating: "v", count: length), "-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"])
                    return (answer, stored().count)
                }
            }
        }
        let expected = bound == .count ? [200, 200, 503] : [200, 503, 200]
        #expect(answers.map(\.0.status) == expected, "\(answers.map(\.0.body))")
        // The files stored after each answer: none for the refused form.
        #expect(answers.map(\.1) == (bound == .count ? [1, 2, 2] : [1, 1, 2]))
        for (answer, status) in zip(answers.map(\.0), expected) where status == 503 {
            #expect(answer.body.lowercased().contains("retry-after: 30"), "\(answer.body)")
            #expect(answer.body.contains("still delivering earlier uploads' events"), "\(answer.body)")
        }
        let events = try FileManager.default.contentsOfDirectory(atPath: outbox.directory)
        let bytes = try events.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: outbox.directory + "/" + $1)[.size] as? Int ?? 0) }
        #expect(events.count == 2 && bytes <= (bound == .bytes ? 1000 : .max), "\(events) \(bytes)")
    }

    @Test("a resumable upload completed while the outbox is full is answered 503 with Retry-After and is not complete; once the outbox has room (an event removed by hand), the completion taken up again records its event and completes",
          .timeLimit(.minutes(2)), arguments: [ResumableKind.tus, .draftFile])
    func resumableCompletionWhileFull(kind: ResumableKind) async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads"
        var configuration = ReceiverConfiguration(directory: uploads)
        let outbox = try UploadEventOutbox(directory: sample.path + "/events", maxCount: 1)
        configuration.events = outbox
        let blocker = try await outbox.record(UploadEvent.postFinish, upload: Self.upload("/earlier"))
        let crash = CompletionCrashTests()
        let content = CompletionCrashTests.content
        let (refused, recorded) = try await crash.withFaultyServer(configuration: configuration, fault: StepFault(.fail, at: .formPartMoved)) { port -> (UploadResponse, [String]) in
            let base = "http://127.0.0.1:\(port)"
            switch kind {
            case .tus:
                let url = try await crash.createTus(base: base)
                let refused = try await crash.tus("PATCH", url, body: content, headers: [CompletionCrashTests.uploadOffset: "0"])
                try FileManager.default.removeItem(atPath: outbox.directory + "/" + blocker.id + ".json")
                #expect(try await crash.tus("HEAD", url).headers[CompletionCrashTests.uploadOffset] == String(content.count))
                _ = try await crash.completedOnce(tusURL: url, in: uploads)
                return (refused, try FileManager.default.contentsOfDirectory(atPath: outbox.directory))
            default:
                let url = try await crash.createDraft(base: base)
                let completion: HTTPFields = [CompletionCrashTests.uploadOffset: String(content.count), CompletionCrashTests.uploadComplete: "?1"]
                let refused = try await crash.draft(.patch, url, body: [], headers: completion)
                try FileManager.default.removeItem(atPath: outbox.directory + "/" + blocker.id + ".json")
                try crash.checkDraftReceipt(try await crash.draft(.patch, url, body: [], headers: completion), in: uploads)
                return (refused, try FileManager.default.contentsOfDirectory(atPath: outbox.directory))
            }
        }
        #expect(refused.status == 503, "\(refused.text)")
        #expect(refused.headers[.retryAfter] == "30", "\(refused.headers)")
        #expect(recorded.count == 1 && recorded.first != blocker.id + ".json", "\(recorded)")
    }

    @Test("an event past the outbox's maxEventBytes — 5000 files with 3000-byte filenames, 3000 fields — is recorded as a summary within it: the first files in order, texts cut with …, and the whole counts in upload.truncated",
          .timeLimit(.minutes(2)))
    func oversizeEventSummarised() async throws {
        let sample = try SampleDirectory()
        let outbox = try UploadEventOutbox(directory: sample.path + "/events", maxEventBytes: 64 << 10)
        let files = (0..<5000).map { index in
            Receipt.File(name: "f\(index)", filename: String(repeating: "é", count: 1500) + ".bin", contentType: "application/octet-stream",
                         size: 1, sha256: String(repeating: "0", count: 64), storedAs: String(format: "%032x", index))
        }
        let fields = (0..<3000).map { Receipt.Field(name: "t\($0)", value: String(repeating: "v", count: 100)) }
        let upload = UploadEvent.Upload(protocol: .multipart, method: "POST", path: "/upload", client: "127.0.0.1",
                                        receipt: Receipt(fields: fields, files: files), metadata: ["user": "42"])
        let event = try await outbox.record(UploadEvent.postFinish, upload: upload)
        let path = outbox.directory + "/" + event.id + ".json"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.count <= 64 << 10, "\(data.count) bytes")
        let stored = try JSONDecoder().decode(UploadEvent.self, from: data)
        #expect(stored.id == event.id && stored.type == UploadEvent.postFinish)
        #expect(stored.upload.truncated == UploadEvent.Truncation(files: 5000, fields: 3000, metadata: 1))
        let listed = stored.upload.receipt.files
        #expect(!listed.isEmpty && listed.count < 5000, "\(listed.count)")
        #expect(listed.map(\.storedAs) == files.prefix(listed.count).map(\.storedAs))
        #expect(listed.allSatisfy { $0.filename.utf8.count <= UploadEvent.maxSummarisedTextBytes + 3 && $0.filename.hasSuffix("é…") })
        #expect(stored.upload.metadata == ["user": "42"] || stored.upload.metadata == [:])
        let whole = try JSONEncoder().encode(UploadEvent(id: event.id, type: event.type, upload: upload)).count
        print("an event of \(whole) bytes recorded as \(data.count): \(listed.count) of 5000 files, \(stored.upload.receipt.fields.count) of 3000 fields listed")
        // A small event is kept whole, without the marker.
        let small = try await outbox.record(UploadEvent.postFinish, upload: Self.upload("/small"))
        let smallText = try String(contentsOfFile: outbox.directory + "/" + small.id + ".json", encoding: .utf8)
        #expect(!smallText.contains("truncated"), "\(smallText)")
    }
}
