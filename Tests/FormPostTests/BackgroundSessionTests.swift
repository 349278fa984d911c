import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import FormPost
@testable import FormPostURLSession
import Hummingbird
import Logging
import Multipart
import Synchronization
import Testing

/// A background session's bookkeeping across suspension and relaunch: which body files are
/// in use, which tasks finished with no caller waiting (and their results), what is
/// removed, when the system's completion handler is called. The ledger is driven with
/// every event directly; the transport with real files, a real server and real URLSession
/// tasks — on Linux an ordinary session routed as a background one (FoundationNetworking
/// has no background sessions), where a task made on the session by hand is one that no
/// caller of this run waits for, as after a relaunch, and the session's end of events is
/// reported as `urlSessionDidFinishEvents(forBackgroundURLSession:)` reports it on Apple
/// platforms.
@Suite("Background sessions: finished uploads, body files and the system's completion handler across relaunches")
struct BackgroundSessionTests {
    typealias Ledger = BackgroundSessionLedger<Int>

    static let request = (url: URL(string: "http://127.0.0.1:1/upload")!, method: RequestMethod.post, headers: HTTPFields([HTTPField(name: HTTPField.Name("X-Upload-ID")!, value: "42")]))
    static let answer = (status: 201, headers: HTTPFields([HTTPField(name: .contentType, value: "application/json")]))

    // MARK: - The ledger: body files

    @Test("a task description names its body file; a description that names a path, a hidden file or nothing of ours names none")
    func taskDescriptions() {
        #expect(Ledger.taskDescription(bodyFile: "A.body") == "formpost-body:A.body")
        #expect(Ledger.bodyFile(fromTaskDescription: Ledger.taskDescription(bodyFile: "A.body")) == "A.body")
        for foreign in [nil, "", "A.body", "formpost-body:", "formpost-body:.body", "formpost-body:../A.body", "formpost-body:a/A.body",
                        "formpost-body:.hidden.body", "formpost-body:A.txt", "someone else's"] as [String?] {
            #expect(Ledger.bodyFile(fromTaskDescription: foreign) == nil, "\(String(describing: foreign))")
        }
    }

    @Test("the sweep names body files no request of this run and no task of the session uses, and never a file that cannot be a body file")
    func sweep() {
        var ledger = Ledger(maxResponseBytes: 100)
        ledger.reserve("writing.body")
        ledger.reserve("released.body")
        ledger.release("released.body")
        let present = ["writing.body", "live.body", "left.body", "released.body", "notes.txt", ".hidden.body"]
        let live = [Ledger.taskDescription(bodyFile: "live.body"), nil, "someone else's"]
        #expect(ledger.sweep(present: present, liveTaskDescriptions: live) == ["left.body", "released.body"])
    }

    @Test("a task with a caller: its body file is removed and no longer reserved, and no result is kept")
    func attachedTaskCompletes() {
        var ledger = Ledger(maxResponseBytes: 100)
        ledger.reserve("A.body")
        #expect(ledger.sweep(present: ["A.body"], liveTaskDescriptions: []).isEmpty)
        ledger.orphanReceived(task: 1, bytes: [1, 2, 3])
        let completion = ledger.taskCompleted(task: 1, description: Ledger.taskDescription(bodyFile: "A.body"), hasCaller: true, request: Self.request,
                                              response: Self.answer, error: nil)
        #expect(completion.removeFile == "A.body" && completion.resume == nil)
        #expect(ledger.sweep(present: ["A.body"], liveTaskDescriptions: []) == ["A.body"])
        guard case .wait(let handlers) = ledger.next(waiter: 1) else {
            Issue.record("a task with a caller left a result")
            return
        }
        #expect(handlers.isEmpty)
    }

    // MARK: - The ledger: results of tasks without a caller

    @Test("a task without a caller leaves its result (request, status, fields, body) for the next iteration; one that ends with a description of no body file removes nothing")
    func orphanBuffered() throws {
        var ledger = Ledger(maxResponseBytes: 100)
        ledger.orphanReceived(task: 7, bytes: Array("{\"ok\":".utf8))
        ledger.orphanReceived(task: 7, bytes: Array("true}".utf8))
        let completion = ledger.taskCompleted(task: 7, description: "someone else's", hasCaller: false, request: Self.request, response: Self.answer, error: nil)
        #expect(completion.removeFile == nil && completion.resume == nil)
        guard case .result(let result) = ledger.next(waiter: 1) else {
            Issue.record("no result")
            return
        }
        #expect(result.url == Self.request.url && result.method == .post && result.requestHeaders[HTTPField.Name("X-Upload-ID")!] == "42")
        let response = try result.outcome.get()
        #expect(response.status == 201 && response.header("Content-Type") == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"ok\":true}")
        #expect(response.url == Self.request.url && response.method == .post)
        guard case .wait = ledger.next(waiter: 2) else {
            Issue.record("a result was delivered twice")
            return
        }
    }

    @Test("a waiting iteration is resumed with the result at once; a second iteration while one waits ends; a cancelled wait ends and later results wait")
    func orphanToWaiter() {
        var ledger = Ledger(maxResponseBytes: 100)
        guard case .wait = ledger.next(waiter: 1) else {
            Issue.record("nothing should be there yet")
            return
        }
        guard case .busy = ledger.next(waiter: 2) else {
            Issue.record("a second iteration should end while one waits")
            return
        }
        let completion = ledger.taskCompleted(task: 3, description: nil, hasCaller: false, request: Self.request, response: Self.answer, error: nil)
        #expect(completion.resume?.waiter == 1)
        #expect((try? completion.resume?.result.outcome.get().status) == 201)
        guard case .wait = ledger.next(waiter: 4) else {
            Issue.record("the result was kept as well as delivered")
            return
        }
        #expect(ledger.stopWaiting() == 4)
        #expect(ledger.stopWaiting() == nil)
        #expect(ledger.taskCompleted(task: 5, description: nil, hasCaller: false, request: Self.request, response: Self.answer, error: nil).resume == nil)
        guard case .result = ledger.next(waiter: 6) else {
            Issue.record("a result that came while nothing waited was lost")
            return
        }
    }

    @Test("an answer larger than maxResponseBytes, a task that failed, a task without an answer: each a failure of its own")
    func orphanFailures() {
        var ledger = Ledger(maxResponseBytes: 4)
        ledger.orphanReceived(task: 1, bytes: [1, 2, 3])
        ledger.orphanReceived(task: 1, bytes: [4, 5])
        _ = ledger.taskCompleted(task: 1, description: nil, hasCaller: false, request: Self.request, response: Self.answer, error: nil)
        _ = ledger.taskCompleted(task: 2, description: nil, hasCaller: false, request: Self.request, response: nil, error: UploadError.timedOut("no answer"))
        _ = ledger.taskCompleted(task: 3, description: nil, hasCaller: false, request: Self.request, response: nil, error: nil)
        var errors: [UploadError?] = []
        for waiter in 1...3 {
            guard case .result(let result) = ledger.next(waiter: waiter), case .failure(let error) = result.outcome else {
                Issue.record("result \(waiter) is not a failure")
                return
            }
            errors.append(error as? UploadError)
        }
        guard case .responseTooLarge(limit: 4)? = errors[0], case .timedOut? = errors[1], case .transport? = errors[2] else {
            Issue.record("unexpected \(errors)")
            return
        }
    }

    // MARK: - The ledger: the system's completion handlers

    @Test("the handler handed in before the events finish is called when they finish, once; a later handler waits for the next finish")
    func handlerThenFinish() {
        var ledger = Ledger(maxResponseBytes: 100)
        #expect(ledger.handEvents(handler: 1).isEmpty)
        #expect(ledger.eventsFinished() == [1])
        #expect(ledger.handEvents(handler: 2).isEmpty, "a finish already claimed must not release the next wake's handler")
        #expect(ledger.eventsFinished() == [2])
    }

    @Test("a finish that came before any handler releases the handler handed in next")
    func finishThenHandler() {
        var ledger = Ledger(maxResponseBytes: 100)
        #expect(ledger.eventsFinished().isEmpty)
        #expect(ledger.handEvents(handler: 1) == [1])
        #expect(ledger.handEvents(handler: 2).isEmpty)
    }

    @Test("with a result not yet taken, the handler waits until the iteration has taken it and come back for the next")
    func handlerWaitsForResults() {
        var ledger = Ledger(maxResponseBytes: 100)
        #expect(ledger.handEvents(handler: 1).isEmpty)
        _ = ledger.taskCompleted(task: 1, description: nil, hasCaller: false, request: Self.request, response: Self.answer, error: nil)
        #expect(ledger.eventsFinished().isEmpty, "a result nobody took yet")
        guard case .result = ledger.next(waiter: 1) else {
            Issue.record("no result")
            return
        }
        #expect(ledger.handEvents(handler: 2).isEmpty, "the result taken is not handled until the iteration comes back")
        guard case .wait(let handlers) = ledger.next(waiter: 2) else {
            Issue.record("nothing more should be there")
            return
        }
        #expect(handlers == [1, 2])
    }

    @Test("a result handed to a waiting iteration holds the handler until that iteration comes back")
    func handlerWaitsForResumedResult() {
        var ledger = Ledger(maxResponseBytes: 100)
        guard case .wait(let none) = ledger.next(waiter: 1), none.isEmpty else {
            Issue.record("nothing should be called yet")
            return
        }
        #expect(ledger.handEvents(handler: 1).isEmpty)
        #expect(ledger.taskCompleted(task: 1, description: nil, hasCaller: false, request: Self.request, response: Self.answer, error: nil).resume?.waiter == 1)
        #expect(ledger.eventsFinished().isEmpty)
        guard case .wait(let handlers) = ledger.next(waiter: 2) else {
            Issue.record("nothing more should be there")
            return
        }
        #expect(handlers == [1])
    }

    // MARK: - The body directory

    @Test("a session's directory name keeps letters, digits, -, _ and . and escapes everything else, so no identifier names a path elsewhere", arguments: [
        ("com.example.uploads", "com.example.uploads"),
        ("../x", "%2E.%2Fx"),
        ("..", "%2E."),
        ("a b/ü", "a%20b%2F%C3%BC"),
        ("100%", "100%25"),
        ("", "%"),
    ])
    func directoryName(identifier: String, expected: String) {
        #expect(BackgroundBodyDirectory.directoryName(identifier: identifier) == expected)
        #expect(BackgroundBodyDirectory(identifier: identifier, under: "/tmp/x").path == "/tmp/x/" + expected)
    }

    // MARK: - The transport, with real files and tasks

    @Test("a transport made after a relaunch removes the body files an earlier run left (no task names them), and nothing else")
    func relaunchSweepsLeftFiles() async throws {
        let directory = try SampleDirectory()
        _ = try directory.file("left-by-a-run.body", size: 1_000)
        _ = try directory.file("its-task-never-started.body", size: 10)
        _ = try directory.file("notes.txt", size: 10)
        let transport = Self.backgroundTransport(directory)
        defer { transport.invalidate() }
        let removed = await transport.bodyFileSweep?.value
        #expect(removed == ["its-task-never-started.body", "left-by-a-run.body"])
        #expect(try Self.files(directory) == ["notes.txt"])
    }

    @Test("a task that finished with no caller waiting: its result comes through finishedUploads and its body file goes; until it completes the sweep keeps that file")
    func orphanedTaskThroughTransport() async throws {
        let directory = try SampleDirectory()
        let transport = Self.backgroundTransport(directory)
        defer { transport.invalidate() }
        _ = await transport.bodyFileSweep?.value
        // What an earlier run left: the body file of a task the session kept, and one whose task never started.
        let body = try directory.file("kept-task.body", size: 200_000)
        _ = try directory.file("never-started.body", size: 10)
        let server = HeldServer()
        defer { server.release.open() }
        let outcome = try await server.run { base throws -> BackgroundUploadResult? in
            var request = URLRequest(url: base.appendingPathComponent("upload"))
            request.httpMethod = "PUT"
            request.setValue("42", forHTTPHeaderField: "X-Upload-ID")
            let task = transport.session.uploadTask(with: request, fromFile: URL(fileURLWithPath: body))
            task.taskDescription = BackgroundSessionLedger<Never>.taskDescription(bodyFile: "kept-task.body")
            task.resume()
            // The server has the whole body and holds its answer: the task is live.
            #expect(await within(30) { await server.received.wait() } == true)
            #expect(await transport.sweepBodyFiles() == ["never-started.body"])
            #expect(try Self.files(directory) == ["kept-task.body"])
            server.release.open()
            return await within(30) {
                for await finished in transport.finishedUploads { return finished }
                return nil
            } ?? nil
        }
        guard let outcome else {
            Issue.record("no finished upload came")
            return
        }
        #expect(outcome.url.path == "/upload" && outcome.method == "PUT" && outcome.requestHeaders[HTTPField.Name("X-Upload-ID")!] == "42")
        let response = try outcome.outcome.get()
        #expect(response.status == 201)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"length":200000,"uploadID":"42"}"#)
        #expect(try Self.files(directory).isEmpty)
    }

    @Test("an upload through the client writes its body in the session's directory, which the sweep leaves while it is sent and the completion removes")
    func attachedUploadUsesSessionDirectory() async throws {
        let directory = try SampleDirectory()
        let transport = Self.backgroundTransport(directory)
        defer { transport.invalidate() }
        _ = await transport.bodyFileSweep?.value
        var form = MultipartForm()
        form.append(name: "title", value: "x")
        form.append(name: "data", value: String(repeating: "y", count: 100_000))
        let sent = form
        let server = HeldServer()
        defer { server.release.open() }
        let status = try await server.run { base throws -> Int in
            async let response = FormPostClient(transport: transport).upload(sent, to: base.appendingPathComponent("upload"), headers: [HTTPField.Name("X-Upload-ID")!: "7"])
            #expect(await within(30) { await server.received.wait() } == true)
            let during = try Self.files(directory)
            #expect(during.count == 1 && during.allSatisfy { $0.hasSuffix(".body") })
            #expect(await transport.sweepBodyFiles().isEmpty, "a body being sent was swept")
            server.release.open()
            return try await response.status
        }
        #expect(status == 201)
        #expect(try Self.files(directory).isEmpty)
        let uploads = transport.finishedUploads
        let waiting = Task { var iterator = uploads.makeAsyncIterator(); return await iterator.next() }
        waiting.cancel()
        #expect(await waiting.value == nil, "an upload with a caller is no finished upload without one")
    }

    @Test("the system's completion handler waits for the finished upload to be taken and the iteration to come back, then is called on the main actor")
    func completionHandlerAfterResults() async throws {
        let directory = try SampleDirectory()
        let transport = Self.backgroundTransport(directory)
        defer { transport.invalidate() }
        _ = await transport.bodyFileSweep?.value
        let log = Mutex<[String]>([])
        await MainActor.run {
            transport.handleEventsForBackgroundURLSession {
                MainActor.assertIsolated()
                log.withLock { $0.append("handler") }
            }
        }
        // A task no caller waits for, to a port nothing listens on, with its body file.
        let body = try directory.file("refused.body", size: 1_000)
        var request = URLRequest(url: URL(string: "http://127.0.0.1:1/upload")!)
        request.httpMethod = "POST"
        let task = transport.session.uploadTask(with: request, fromFile: URL(fileURLWithPath: body))
        task.taskDescription = BackgroundSessionLedger<Never>.taskDescription(bodyFile: "refused.body")
        task.resume()
        // Its completion removes the file.
        #expect(await within(30) { () async -> Bool in
            while (try? Self.files(directory))?.isEmpty == false { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        } == true)
        transport.sessionEventsFinished()
        await MainActor.run {}
        #expect(log.withLock { $0 }.isEmpty, "the handler came before the result was taken")
        let uploads = transport.finishedUploads
        guard let first = await within(30, { var iterator = uploads.makeAsyncIterator(); return await iterator.next() }) ?? nil else {
            Issue.record("no finished upload came")
            return
        }
        guard case .failure(let error) = first.outcome, case .cannotConnect? = error as? UploadError else {
            Issue.record("expected cannotConnect, got \(first.outcome)")
            return
        }
        log.withLock { $0.append("result handled") }
        await MainActor.run {}
        #expect(log.withLock { $0 } == ["result handled"], "the handler came before the iteration came back")
        // The iteration comes back for the next: the handler is called.
        let next = Task { var iterator = uploads.makeAsyncIterator(); return await iterator.next() }
        #expect(await within(30) { () async -> Bool in
            while log.withLock({ $0.count }) < 2 { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        } == true)
        #expect(log.withLock { $0 } == ["result handled", "handler"])
        next.cancel()
        #expect(await next.value == nil)
    }

    @Test("one transport per identifier: asked again it is the same, and a new one once it was invalidated; an ordinary transport calls the handler at once")
    func registry() async throws {
        let directory = try SampleDirectory()
        let made = Mutex(0)
        let identifier = "org.formpost.tests.\(UUID().uuidString)"
        let make = { @Sendable () -> URLSessionTransport in
            made.withLock { $0 += 1 }
            return Self.backgroundTransport(directory)
        }
        let first = BackgroundTransportRegistry.transport(identifier: identifier, make: make)
        #expect(BackgroundTransportRegistry.transport(identifier: identifier, make: make) === first)
        first.invalidate()
        let second = BackgroundTransportRegistry.transport(identifier: identifier, make: make)
        defer { second.invalidate() }
        #expect(second !== first && made.withLock { $0 } == 2)

        let ordinary = URLSessionTransport()
        defer { ordinary.invalidate() }
        let called = Mutex(false)
        await MainActor.run { ordinary.handleEventsForBackgroundURLSession { called.withLock { $0 = true } } }
        #expect(called.withLock { $0 })
        var uploads = ordinary.finishedUploads.makeAsyncIterator()
        #expect(await uploads.next() == nil)
    }

    // MARK: - Helpers

    /// An ordinary session routed as a background one, its body files in `directory`.
    static func backgroundTransport(_ directory: SampleDirectory) -> URLSessionTransport {
        URLSessionTransport(configuration: .default, inMemoryLimit: 10_000_000, uploadsFromFile: false, challengeHandler: nil, isBackground: true,
                            bodyDirectory: BackgroundBodyDirectory(path: directory.path))
    }

    /// The names of the files in `directory`, sorted.
    static func files(_ directory: SampleDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }
}

/// `body`'s value, or nil when it takes more than `seconds` (it is then cancelled).
private func within<T: Sendable>(_ seconds: Int, _ body: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// A flag tasks wait for (polling, so that a cancelled wait ends).
private final class Latch: Sendable {
    private let isOpen = Mutex(false)

    /// Waits until the latch opens or the task is cancelled; whether it opened.
    @discardableResult
    func wait() async -> Bool {
        while !isOpen.withLock({ $0 }) && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        return isOpen.withLock { $0 }
    }

    func open() { isOpen.withLock { $0 = true } }
}

/// A server on 127.0.0.1 that reads a request's whole body, opens `received`, and answers
/// only once `release` opens: 201 with `{"length":…,"uploadID":…}` (the body's length and
/// its `X-Upload-ID` field).
private final class HeldServer: Sendable {
    let received = Latch()
    let release = Latch()

    func run<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            var length = 0
            for try await buffer in request.body { length += buffer.readableBytes }
            self.received.open()
            await self.release.wait()
            let id = request.headers[HTTPField.Name("X-Upload-ID")!] ?? ""
            let json = #"{"length":\#(length),"uploadID":"\#(id)"}"#
            return Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: json)))
        }
        return try await whileRunning({ onStarted in
            Application(
                responder: responder,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onStarted($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }, { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) })
    }
}
