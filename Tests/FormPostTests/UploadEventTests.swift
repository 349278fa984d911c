import Foundation
import FormPostServer
import HTTPTypes
import Hummingbird
import Logging
import Multipart
import Synchronization
import Testing

/// `post-finish` events: recorded durably before a form's receipt is answered, delivered
/// until taken — by `formpost serve --hook-events post-finish` to its hook, across a kill.
@Suite("Upload events")
struct UploadEventTests {
    /// A hook that refuses every event (503) until ``accepting``; it keeps every body it got.
    final class EventHook: @unchecked Sendable {
        private let lock = NSLock()
        private var bodies: [(accepted: Bool, body: Data)] = []
        private var accepts = false
        private var delay = Duration.zero

        var accepting: Bool {
            get { lock.withLock { accepts } }
            set { lock.withLock { accepts = newValue } }
        }

        /// How long it takes to answer each event (none by default).
        var answerDelay: Duration {
            get { lock.withLock { delay } }
            set { lock.withLock { delay = newValue } }
        }

        /// The events received, each with whether it was taken.
        var events: [(accepted: Bool, event: UploadEvent)] {
            lock.withLock { bodies }.compactMap { received in
                (try? JSONDecoder().decode(UploadEvent.self, from: received.body)).map { (received.accepted, $0) }
            }
        }

        /// Answers one posted event: 204 when accepting, else 503.
        func take(_ body: Data) -> Bool {
            lock.withLock {
                bodies.append((accepts, body))
                return accepts
            }
        }
    }

    static func withHook<T: Sendable>(_ hook: EventHook, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let router = Router(context: BasicRequestContext.self)
        router.post("events") { request, _ -> Response in
            let data = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            try await Task.sleep(for: hook.answerDelay)
            return Response(status: hook.take(data) ? .noContent : .serviceUnavailable)
        }
        return try await whileRunning({ onStarted in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onStarted($0.localAddress?.port ?? 0) })
        }, body)
    }

    /// Waits up to `seconds` for `condition`; whether it came true.
    static func eventually(_ seconds: Int, _ condition: () -> Bool) async throws -> Bool {
        let start = ContinuousClock.now
        while !condition() {
            guard ContinuousClock.now - start < .seconds(seconds) else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    @Test("formpost serve --hook-events post-finish: a form's receipt answered while the hook refuses is delivered after the server is killed (SIGKILL) and started again, with the same id and receipt; the outbox is then empty",
          .timeLimit(.minutes(3)))
    func deliveredAcrossAKill() async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads", outbox = uploads + "/.events"
        let file = try sample.file("photo.bin", size: 300_000, seed: 5)
        let hook = EventHook()
        try await Self.withHook(hook) { hookPort in
            let arguments = { (port: Int) in
                ["serve", "--port", String(port), "--dir", uploads, "--hook-url", "http://127.0.0.1:\(hookPort)/events",
                 "--hook-events", "post-finish", "--hook-timeout", "30"]
            }
            let port = try freePort()
            let first = try ChildProcess(formpostBinary, arguments(port), stdout: .discard, stderr: .capture)
            try await RawSocket.waitForListener(port: port, attempts: 800)
            let answer = try await offPool {
                try SignedUploadServeTests.curl(["-F", "title=Hi", "-F", "photo=@" + file, "http://127.0.0.1:\(port)/upload"])
            }
            #expect(answer.status == 200, "\(answer.body)")
            let receipt = try JSONDecoder().decode(Receipt.self, from: Data(answer.body.utf8))
            // The event was recorded before the answer: it is in the outbox, and offered.
            #expect(try FileManager.default.contentsOfDirectory(atPath: outbox).filter { $0.hasSuffix(".json") }.count == 1)
            #expect(try await Self.eventually(30) { !hook.events.isEmpty }, "the hook was never offered the event")
            kill(first.pid, SIGKILL)
            _ = try await offPool { try first.finish(timeout: 30) }
            let refused = hook.events
            #expect(refused.allSatisfy { !$0.accepted } && refused.first?.event.upload.receipt == receipt)

            hook.accepting = true
            let restartPort = try freePort()
            let second = try ChildProcess(formpostBinary, arguments(restartPort), stdout: .discard, stderr: .capture)
            #expect(try await Self.eventually(60) { hook.events.contains { $0.accepted } }, "the event was not delivered after the restart")
            let delivered = hook.events.filter(\.accepted).map(\.event)
            #expect(delivered.count == 1)
            #expect(delivered.first?.id == refused.first?.event.id)
            #expect(delivered.first?.type == "post-finish")
            #expect(delivered.first?.upload.receipt == receipt)
            #expect(delivered.first?.upload.protocol == .multipart && delivered.first?.upload.path == "/upload")
            #expect(delivered.first?.upload.client == "127.0.0.1")
            #expect(try await Self.eventually(10) {
                ((try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? ["?"]).isEmpty
            }, "the delivered event is still in \(outbox)")
            try await offPool { second.stop() }
        }
    }

    @Test("ReceiverConfiguration.events: a form whose event cannot be recorded is answered 500 and leaves no file; one whose event is recorded is answered 200 and its event delivered to a Swift closure",
          .timeLimit(.minutes(2)))
    func noReceiptWithoutEvent() async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads", outboxPath = sample.path + "/events"
        let file = try sample.file("a.bin", size: 200_000, seed: 6)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = ReceiverConfiguration(directory: uploads)
        let outbox = try UploadEventOutbox(directory: outboxPath)
        configuration.events = outbox
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical)
        let stored = { @Sendable in ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter { !$0.hasPrefix(".") } }
        let taken = EventHook()
        taken.accepting = true
        var delivery = UploadEventDelivery(outbox: outbox) { event in
            guard taken.take(Data(UploadReceiverJSON.encode(event).utf8)) else { throw CancellationError() }
        }
        delivery.logger = logger
        let running = delivery
        let deliveryTask = Task { await running.run() }
        defer { deliveryTask.cancel() }
        let (refused, refusedFiles, accepted) = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            try FileManager.default.removeItem(atPath: outboxPath)
            let refused = try await offPool { try SignedUploadServeTests.curl(["-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"]) }
            let refusedFiles = stored()
            try FileManager.default.createDirectory(atPath: outboxPath, withIntermediateDirectories: false)
            let accepted = try await offPool { try SignedUploadServeTests.curl(["-F", "f=@" + file, "http://127.0.0.1:\(port)/upload"]) }
            return (refused, refusedFiles, accepted)
        }
        #expect(refused.status == 500, "\(refused.body)")
        #expect(refusedFiles.isEmpty, "\(refusedFiles)")
        #expect(accepted.status == 200, "\(accepted.body)")
        let receipt = try JSONDecoder().decode(Receipt.self, from: Data(accepted.body.utf8))
        #expect(try await Self.eventually(30) { taken.events.count == 1 }, "the closure was not given the event")
        #expect(taken.events.first?.event.upload.receipt == receipt)
        #expect(stored() == receipt.files.map(\.storedAs))
    }

    /// A resumable upload of each kind whose completion is failed once, after its event is
    /// recorded and before its state says complete.
    enum ResumableKind: String, CaseIterable, Sendable {
        case tus
        case draftFile = "draft file"
        case draftForm = "draft form"
    }

    @Test("a resumable upload's post-finish event is recorded before it is answered complete; a completion failed after the event and taken up again records the same event (one, the same id), whose receipt is the one answered",
          .timeLimit(.minutes(2)), arguments: ResumableKind.allCases)
    func resumableEventRecordedOnce(kind: ResumableKind) async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads", outboxPath = sample.path + "/events"
        var configuration = ReceiverConfiguration(directory: uploads)
        configuration.events = try UploadEventOutbox(directory: outboxPath)
        let fault = StepFault(.fail, at: .afterEvent)
        let crash = CompletionCrashTests()
        // The outbox's events, as its delivery reads them: not a hidden file an event is being
        // written to (the completion taken up again in the background records it anew).
        let events = { @Sendable () -> [UploadEvent] in
            ((try? FileManager.default.contentsOfDirectory(atPath: outboxPath)) ?? []).filter { !$0.hasPrefix(".") }.sorted().compactMap {
                FileManager.default.contents(atPath: outboxPath + "/" + $0).flatMap { try? JSONDecoder().decode(UploadEvent.self, from: $0) }
            }
        }
        let (recordedAtFailure, answered) = try await crash.withFaultyServer(configuration: configuration, fault: fault) { port -> ([UploadEvent], Receipt) in
            let base = "http://127.0.0.1:\(port)"
            switch kind {
            case .tus:
                let url = try await crash.createTus(base: base)
                let failed = try await crash.tus("PATCH", url, body: CompletionCrashTests.content, headers: [CompletionCrashTests.uploadOffset: "0"])
                #expect(failed.status == 500 && fault.count == 1, "\(failed.status) \(failed.text)")
                let atFailure = events()
                // HEAD takes the completion up again (under the upload's lock), as the next append would.
                #expect(try await crash.tus("HEAD", url).headers[CompletionCrashTests.uploadOffset] == String(CompletionCrashTests.content.count))
                let file = try await crash.completedOnce(tusURL: url, in: uploads)
                return (atFailure, Receipt(files: [file]))
            case .draftFile, .draftForm:
                let url = kind == .draftForm ? try await crash.createForm(base: base) : try await crash.createDraft(base: base)
                let length = kind == .draftForm ? CompletionCrashTests.form.count : CompletionCrashTests.content.count
                let completion: HTTPFields = [CompletionCrashTests.uploadOffset: String(length), CompletionCrashTests.uploadComplete: "?1"]
                let failed = try await crash.draft(.patch, url, body: [], headers: completion)
                #expect(failed.status == 500 && fault.count == 1, "\(failed.status) \(failed.text)")
                let atFailure = events()
                let done = try await crash.draft(.patch, url, body: [], headers: completion)
                if kind == .draftForm { try crash.checkFormReceipt(done, in: uploads) } else { try crash.checkDraftReceipt(done, in: uploads) }
                return (atFailure, try done.decode(Receipt.self))
            }
        }
        let recorded = events()
        #expect(recordedAtFailure.count == 1, "events recorded when the completion failed after its event: \(recordedAtFailure.map(\.id))")
        #expect(recorded.count == 1, "events recorded once the upload was complete: \(recorded.map(\.id))")
        #expect(recorded.first?.id == recordedAtFailure.first?.id, "the completion taken up again recorded another event")
        #expect(recorded.first?.type == "post-finish" && recorded.first?.upload.receipt == answered, "\(String(describing: recorded.first))")
        #expect(recorded.first?.upload.protocol == (kind == .tus ? .tus : .ietf))
        #expect(recorded.first?.upload.path == (kind == .tus ? "/files" : "/upload") && recorded.first?.upload.method == "POST")
        #expect(recorded.first?.upload.client == "127.0.0.1")
    }

    @Test("a resumable upload its client ends (DELETE, tus and the draft) records a post-terminate event before the 204, with the creation's protocol, method, path and client",
          .timeLimit(.minutes(2)))
    func terminationRecorded() async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads", outboxPath = sample.path + "/events"
        var configuration = ReceiverConfiguration(directory: uploads)
        configuration.events = try UploadEventOutbox(directory: outboxPath)
        let crash = CompletionCrashTests()
        let answers = try await crash.withFaultyServer(configuration: configuration, fault: StepFault(.fail, at: .afterEvent)) { port -> [Int] in
            let base = "http://127.0.0.1:\(port)"
            let tus = try await crash.createTus(base: base)
            let draft = try await crash.createDraft(base: base)
            return [try await crash.tus("DELETE", tus).status, try await crash.draft(.delete, draft).status]
        }
        #expect(answers == [204, 204])
        let recorded = ((try? FileManager.default.contentsOfDirectory(atPath: outboxPath)) ?? []).filter { !$0.hasPrefix(".") }.sorted().compactMap {
            FileManager.default.contents(atPath: outboxPath + "/" + $0).flatMap { try? JSONDecoder().decode(UploadEvent.self, from: $0) }
        }
        #expect(recorded.map(\.type) == ["post-terminate", "post-terminate"], "\(recorded)")
        #expect(recorded.map(\.upload.protocol) == [.tus, .ietf])
        #expect(recorded.map(\.upload.path) == ["/files", "/upload"] && recorded.allSatisfy { $0.upload.method == "POST" && $0.upload.client == "127.0.0.1" })
        #expect(recorded.allSatisfy { $0.upload.receipt == Receipt() }, "an upload ended before it was complete names no file")
    }

    @Test("the delivery sets aside a file that holds no event and goes on; one it cannot read now (here a directory in its place) is read again later, not set aside, and delivered once readable",
          .timeLimit(.minutes(3)))
    func unreadableEvents() async throws {
        let sample = try SampleDirectory()
        let outbox = try UploadEventOutbox(directory: sample.path + "/events")
        let upload = UploadEvent.Upload(protocol: .multipart, method: "POST", path: "/upload", client: nil, receipt: Receipt())
        let first = try await outbox.record(UploadEvent.postFinish, upload: upload)
        // Sorted after the first: a file of bytes that are no event, then one that cannot be read yet.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: outbox.directory + "/" + first.id + "-a.json"))
        let later = UploadEvent(id: first.id + "-b", type: UploadEvent.postFinish, upload: upload)
        let laterPath = outbox.directory + "/" + later.id + ".json"
        try FileManager.default.createDirectory(atPath: laterPath, withIntermediateDirectories: false)
        let taken = Mutex<[String]>([])
        var delivery = UploadEventDelivery(outbox: outbox) { event in taken.withLock { $0.append(event.id) } }
        delivery.firstRetryDelay = .milliseconds(100)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        delivery.logger = logger
        let running = delivery
        let task = Task { await running.run() }
        // Generous waits: the outbox is read on NIO's thread pool, which the suites beside
        // this one keep busy (a run beside a busy core waited longer than 10 s).
        #expect(try await Self.eventually(60) { taken.withLock { $0 } == [first.id] }, "\(taken.withLock { $0 })")
        try await Task.sleep(for: .milliseconds(500))
        #expect(FileManager.default.fileExists(atPath: laterPath), "the event that could not be read was set aside")
        try FileManager.default.removeItem(atPath: laterPath)
        try Data(UploadReceiverJSON.encode(later).utf8).write(to: URL(fileURLWithPath: laterPath))
        #expect(try await Self.eventually(60) { taken.withLock { $0 } == [first.id, later.id] }, "\(taken.withLock { $0 })")
        // Stopped right after the delivery: the event delivered is removed all the same.
        task.cancel()
        await task.value
        let left = try FileManager.default.contentsOfDirectory(atPath: outbox.directory)
        #expect(left == [first.id + "-a.json.unreadable"], "\(left)")
    }

    @Test("an event taken just as its delivery is stopped is removed from the outbox all the same: the next delivery does not offer it again",
          .timeLimit(.minutes(1)))
    func takenAsStopped() async throws {
        let sample = try SampleDirectory()
        let outbox = try UploadEventOutbox(directory: sample.path + "/events")
        let upload = UploadEvent.Upload(protocol: .multipart, method: "POST", path: "/upload", client: nil, receipt: Receipt())
        let event = try await outbox.record(UploadEvent.postFinish, upload: upload)
        let taken = Mutex<[String]>([])
        // The delivery's task is cancelled inside `deliver`, before the outbox is told.
        let delivery = UploadEventDelivery(outbox: outbox) { event in
            taken.withLock { $0.append(event.id) }
            withUnsafeCurrentTask { $0?.cancel() }
        }
        await delivery.run()
        #expect(taken.withLock { $0 } == [event.id])
        let left = try FileManager.default.contentsOfDirectory(atPath: outbox.directory)
        #expect(left.isEmpty, "left in the outbox, to be delivered again: \(left)")
    }

    @Test("formpost serve refuses an unknown --hook-events name, and --hook-events without --hook-url, with exit status 2")
    func unknownEvent() async throws {
        let sample = try SampleDirectory()
        let result = try await offPool {
            try formpost(["serve", "--port", "0", "--dir", sample.path + "/uploads", "--hook-url", "http://127.0.0.1:1/h", "--hook-events", "pre-create,post-create"])
        }
        #expect(result.status == 2 && result.stderr.contains(#"--hook-events: no event "post-create" (expected pre-create, post-finish, post-terminate)"#), "\(result.stderr)")
        let withoutURL = try await offPool { try formpost(["serve", "--port", "0", "--dir", sample.path + "/uploads", "--hook-events", "post-finish"]) }
        #expect(withoutURL.status == 2 && withoutURL.stderr.contains("--hook-events post-finish: the events go to --hook-url, which is not given"), "\(withoutURL.stderr)")
    }
}

/// An event as JSON, as the hook gets it.
enum UploadReceiverJSON {
    static func encode(_ event: UploadEvent) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(event)) ?? Data(), as: UTF8.self)
    }
}
