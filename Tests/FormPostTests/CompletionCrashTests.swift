import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
import FormPostServer
import Logging
import Multipart
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Completing a resumable upload (tus, and the IETF draft's representation that is not a
/// form) when a step of storing it fails, when `formpost serve` is killed (SIGKILL) at a
/// step, and while it runs: the upload is then complete, or at its full offset and
/// completed by the next request — exactly once: one stored file with the content's
/// SHA-256, the same receipt, nothing left over.
@Suite("Completing a resumable upload across a failed step or a server killed at a step")
struct CompletionCrashTests {
    /// How a client takes up an upload whose completion failed.
    enum Resume: String, CaseIterable, Sendable {
        /// `HEAD` first (a client that lost its answer asks for the offset).
        case head
        /// An empty append at the full offset.
        case append
    }

    let client = FormPostClient()
    static func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
    static let uploadOffset = field("Upload-Offset"), uploadComplete = field("Upload-Complete"), uploadLength = field("Upload-Length")
    static let content: [UInt8] = {
        var random = SystemRandomNumberGenerator()
        return (0..<(300 * 1024)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }()

    // MARK: - tus

    @Test("tus: a completion whose step fails answers 500; HEAD then answers the full length, never 0, and the next HEAD or append completes the upload once: one stored file with its SHA-256, the same receipt after, nothing left in .tus/",
          arguments: CompletionStep.ofOneFile, Resume.allCases)
    func tusStepFails(step: CompletionStep, resume: Resume) async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.fail, at: step)
        try await withFaultyServer(directory: uploads.path, fault: fault) { port in
            let url = try await createTus(base: "http://127.0.0.1:\(port)")
            let failed = try await tus("PATCH", url, body: Self.content, headers: [Self.uploadOffset: "0"])
            #expect(failed.status == 500 && fault.count == 1, "the completion failing \(step.rawValue) answered \(failed.status) \(failed.text)")
            if resume == .append {
                let appended = try await tus("PATCH", url, body: [], headers: [Self.uploadOffset: String(Self.content.count)])
                #expect(appended.status == 204 && appended.headers[Self.uploadOffset] == String(Self.content.count), "\(appended.status) \(appended.text)")
            }
            let offset = try await tus("HEAD", url).headers[Self.uploadOffset]
            #expect(offset == String(Self.content.count), "HEAD answers \(offset ?? "nothing")")
            let receipt = try await completedOnce(tusURL: url, in: uploads.path)
            #expect(try await tus("HEAD", url).headers[Self.uploadOffset] == String(Self.content.count))
            #expect(try await tus("PATCH", url, body: [], headers: [Self.uploadOffset: String(Self.content.count)]).status == 204)
            #expect(try await completedOnce(tusURL: url, in: uploads.path) == receipt, "the receipt stays the same")
        }
    }

    @Test("tus: DELETE on an upload whose completion failed once its data was linked removes that file too: nothing is left in the directory or .tus/")
    func tusDeleteAfterFailedCompletion() async throws {
        let uploads = try SampleDirectory()
        // Failing always, the sweep's completions included (the fault given at the receiver's
        // start, which its sweep keeps): a sweep that stored the upload between the 500 and
        // the DELETE (as one did on a loaded machine) would make it another test.
        let fault = StepFault(.failAlways, at: .afterLink)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: uploads.path)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let faultyTus = try TusReceiver(configuration: configuration, expiry: .seconds(3600), logger: logger, completionFault: fault.hook)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: faultyTus)
        try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            let url = try await createTus(base: "http://127.0.0.1:\(port)")
            #expect(try await tus("PATCH", url, body: Self.content, headers: [Self.uploadOffset: "0"]).status == 500)
            #expect(try await tus("DELETE", url).status == 204)
            #expect(try await tus("HEAD", url).status == 404)
            let left = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { $0 != ".tus" && $0 != ".resumable" }
                + FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.tus")
            #expect(left.isEmpty, "left behind: \(left)")
        }
    }

    @Test("draft: DELETE on an upload whose completion failed once its data was linked removes that file too: no answer named it, nothing is left in the directory or .resumable/")
    func draftDeleteAfterFailedCompletion() async throws {
        let uploads = try SampleDirectory()
        // Failing always, sweeps included: a sweep that stored the upload between the 500
        // and the DELETE (as one did on a loaded machine) would make it another test.
        let fault = StepFault(.failAlways, at: .afterLink)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: uploads.path), logger: logger)
        let resumable = try ResumableUploadReceiver(receiver: receiver, expiry: .seconds(3600), logger: logger, completionFault: fault.hook)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, resumable: resumable)
        try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            let url = try await createDraft(base: "http://127.0.0.1:\(port)")
            let completion: HTTPFields = [Self.uploadOffset: String(Self.content.count), Self.uploadComplete: "?1"]
            #expect(try await draft(.patch, url, body: [], headers: completion).status == 500)
            #expect(try await draft(.delete, url).status == 204)
            let left = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { $0 != ".tus" && $0 != ".resumable" }
                + FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.resumable")
            #expect(left.isEmpty, "left behind: \(left)")
        }
    }

    @Test("tus: HEAD on a complete upload whose completion keeps failing answers 503 with Retry-After: 1, as the draft's receiver answers a completion still under way (it is taken up again within moments), not the 60 s of a receiver that takes no more uploads")
    func tusHeadWhileCompletionFails() async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.failAlways, at: .beforeLink)
        try await withFaultyServer(directory: uploads.path, fault: fault) { port in
            let url = try await createTus(base: "http://127.0.0.1:\(port)")
            #expect(try await tus("PATCH", url, body: Self.content, headers: [Self.uploadOffset: "0"]).status == 500)
            let head = try await tus("HEAD", url)
            #expect(head.status == 503 && head.headers[.retryAfter] == "1", "\(head.status), Retry-After \(head.headers[.retryAfter] ?? "none")")
        }
    }

    /// One step held at a time: a held step holds one of the few threads of NIO's pool.
    @Test("tus: HEAD while a completion is held at a step answers the full length, never 0, and the completion then stores the upload once",
          .serialized, arguments: CompletionStep.ofOneFile)
    func tusHeadWhileCompleting(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.hold, at: step)
        try await withFaultyServer(directory: uploads.path, fault: fault) { port in
            let url = try await createTus(base: "http://127.0.0.1:\(port)")
            let completing = Task { try await tus("PATCH", url, body: Self.content, headers: [Self.uploadOffset: "0"]) }
            let held = try await offPool { fault.waitUntilHeld() }
            #expect(held, "the completion reached \(step.rawValue)")
            let offset = try await tus("HEAD", url).headers[Self.uploadOffset]
            fault.release()
            #expect(offset == String(Self.content.count), "HEAD during the completion answers \(offset ?? "nothing")")
            let completed = try await completing.value
            #expect(completed.status == 204 && completed.headers[Self.uploadOffset] == String(Self.content.count), "\(completed.status) \(completed.text)")
            _ = try await completedOnce(tusURL: url, in: uploads.path)
        }
    }

    @Test("tus: formpost serve killed at a step of a completion, restarted on the same directory: HEAD answers the full length, and the upload is completed once with its SHA-256, nothing orphaned",
          arguments: CompletionStep.ofOneFile)
    func tusKilledAtStep(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let port = try freePort()
        let base = "http://127.0.0.1:\(port)"
        let first = try await offPool { try Self.serve(port: port, directory: uploads.path, killingAt: step) }
        let url = try await createTus(base: base)
        _ = try? await tus("PATCH", url, body: Self.content, headers: [Self.uploadOffset: "0"])
        let ended = try await offPool { try first.finish(timeout: 60) }
        #expect(ended.status == 128 + SIGKILL, "the server was killed at \(step.rawValue) (status \(ended.status))")
        let second = try await offPool { try Self.serve(port: port, directory: uploads.path) }
        defer { second.stop() }
        let offset = try await tus("HEAD", url).headers[Self.uploadOffset]
        #expect(offset == String(Self.content.count), "after the restart, HEAD answers \(offset ?? "nothing")")
        let appended = try await tus("PATCH", url, body: [], headers: [Self.uploadOffset: String(Self.content.count)])
        #expect(appended.status == 204 && appended.headers[Self.uploadOffset] == String(Self.content.count), "\(appended.status) \(appended.text)")
        _ = try await completedOnce(tusURL: url, in: uploads.path)
        try await offPool { second.stop() }
    }

    // MARK: - IETF draft

    @Test("draft: completing a representation that is not a form fails at a step (500, not complete); HEAD answers the full offset, and completing again answers the receipt once: one stored file with its SHA-256, the same receipt again, nothing left in .resumable/",
          arguments: CompletionStep.ofOneFile)
    func draftStepFails(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.fail, at: step)
        try await withFaultyServer(directory: uploads.path, fault: fault) { port in
            let url = try await createDraft(base: "http://127.0.0.1:\(port)")
            let completion: HTTPFields = [Self.uploadOffset: String(Self.content.count), Self.uploadComplete: "?1"]
            let failed = try await draft(.patch, url, body: [], headers: completion)
            #expect(failed.status == 500 && failed.headers[Self.uploadComplete] != "?1" && fault.count == 1,
                    "the completion failing \(step.rawValue) answered \(failed.status) \(failed.text)")
            let offset = try await draft(.head, url).headers[Self.uploadOffset]
            #expect(offset == String(Self.content.count), "HEAD answers \(offset ?? "nothing")")
            let done = try await draft(.patch, url, body: [], headers: completion)
            #expect(done.status == 200 && done.headers[Self.uploadComplete] == "?1", "\(done.status) \(done.text)")
            try checkDraftReceipt(done, in: uploads.path)
            #expect(try await draft(.get, url).body == done.body, "the kept answer is the receipt")
            #expect(try await draft(.patch, url, body: [], headers: completion).body == done.body, "the receipt is given again")
            try checkDraftReceipt(done, in: uploads.path)
        }
    }

    @Test("draft: formpost serve killed at a step of storing a representation that is not a form, restarted on the same directory: HEAD answers the full offset, and completing answers the receipt of one stored file with its SHA-256, nothing orphaned",
          arguments: CompletionStep.ofOneFile)
    func draftKilledAtStep(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let port = try freePort()
        let base = "http://127.0.0.1:\(port)"
        let first = try await offPool { try Self.serve(port: port, directory: uploads.path, killingAt: step) }
        let url = try await createDraft(base: base)
        let completion: HTTPFields = [Self.uploadOffset: String(Self.content.count), Self.uploadComplete: "?1"]
        _ = try? await draft(.patch, url, body: [], headers: completion)
        let ended = try await offPool { try first.finish(timeout: 60) }
        #expect(ended.status == 128 + SIGKILL, "the server was killed at \(step.rawValue) (status \(ended.status))")
        let second = try await offPool { try Self.serve(port: port, directory: uploads.path) }
        defer { second.stop() }
        let offset = try await draft(.head, url).headers[Self.uploadOffset]
        #expect(offset == String(Self.content.count), "after the restart, HEAD answers \(offset ?? "nothing")")
        let done = try await draft(.patch, url, body: [], headers: completion)
        #expect(done.status == 200 && done.headers[Self.uploadComplete] == "?1", "\(done.status) \(done.text)")
        try checkDraftReceipt(done, in: uploads.path)
        try await offPool { second.stop() }
    }

    // MARK: - IETF draft, forms

    @Test("draft: a form whose completion fails after its answer is saved (before any of its files moved, or after the first) answers 500; the next request finds it complete with that answer, each file stored once with its SHA-256, nothing left in .resumable/",
          arguments: CompletionStep.ofForm)
    func formStepFails(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.fail, at: step)
        try await withFaultyServer(directory: uploads.path, fault: fault) { port in
            let url = try await createForm(base: "http://127.0.0.1:\(port)")
            let failed = try await draft(.patch, url, body: [], headers: [Self.uploadOffset: String(Self.form.count), Self.uploadComplete: "?1"])
            #expect(failed.status == 500 && fault.count == 1, "the completion failing \(step.rawValue) answered \(failed.status) \(failed.text)")
            let head = try await draft(.head, url)
            #expect(head.headers[Self.uploadOffset] == String(Self.form.count) && head.headers[Self.uploadComplete] == "?1", "HEAD: \(head.headers)")
            let answer = try await draft(.get, url)
            try checkFormReceipt(answer, in: uploads.path)
            #expect(try await draft(.get, url).body == answer.body, "the kept answer stays")
        }
    }

    @Test("draft: formpost serve killed at a step of storing a form's files, restarted on the same directory: the upload answers complete with its receipt, each file stored once with its SHA-256, nothing orphaned",
          arguments: CompletionStep.ofForm)
    func formKilledAtStep(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let port = try freePort()
        let base = "http://127.0.0.1:\(port)"
        let first = try await offPool { try Self.serve(port: port, directory: uploads.path, killingAt: step) }
        let url = try await createForm(base: base)
        _ = try? await draft(.patch, url, body: [], headers: [Self.uploadOffset: String(Self.form.count), Self.uploadComplete: "?1"])
        let ended = try await offPool { try first.finish(timeout: 60) }
        #expect(ended.status == 128 + SIGKILL, "the server was killed at \(step.rawValue) (status \(ended.status))")
        let second = try await offPool { try Self.serve(port: port, directory: uploads.path) }
        defer { second.stop() }
        let head = try await draft(.head, url)
        #expect(head.headers[Self.uploadOffset] == String(Self.form.count) && head.headers[Self.uploadComplete] == "?1", "after the restart, HEAD: \(head.headers)")
        try checkFormReceipt(try await draft(.get, url), in: uploads.path)
        try await offPool { second.stop() }
    }

    /// A form of a field and two files, the content and its second half.
    static let form: [UInt8] = {
        let half = content.count / 2
        func part(_ disposition: String, _ bytes: ArraySlice<UInt8>) -> [UInt8] {
            Array("--crash\r\nContent-Disposition: form-data; \(disposition)\r\n\r\n".utf8) + bytes + Array("\r\n".utf8)
        }
        return part("name=\"note\"", Array("hello".utf8)[...]) + part("name=\"a\"; filename=\"a.bin\"", content[...])
            + part("name=\"b\"; filename=\"b.bin\"", content[half...]) + Array("--crash--\r\n".utf8)
    }()

    /// Creates a resumable form with all of its bytes, not complete; returns its URL.
    func createForm(base: String) async throws -> String {
        let created = try await draft(.post, base + "/upload", body: Self.form, contentType: "multipart/form-data; boundary=crash",
                                      headers: [Self.uploadComplete: "?0"])
        #expect(created.status == 201 && created.headers[Self.uploadOffset] == String(Self.form.count), "\(created.status) \(created.text)")
        return base + (created.headers[.location] ?? "")
    }

    /// Checks the answer to ``form``: its receipt, each file stored once in `directory`
    /// with its content, only the upload's state left in `.resumable/`.
    func checkFormReceipt(_ answer: UploadResponse, in directory: String) throws {
        #expect(answer.status == 200 && answer.headers[Self.uploadComplete] == "?1", "\(answer.status) \(answer.text)")
        let receipt = try answer.decode(Receipt.self)
        #expect(receipt.fields == [.init(name: "note", value: "hello")])
        let half = Self.content.count / 2
        #expect(receipt.files.map(\.sha256) == [sha256Hex(Self.content), sha256Hex(Self.content[half...])])
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
        #expect(stored.sorted() == receipt.files.map(\.storedAs).sorted(), "the directory holds \(stored)")
        for file in receipt.files {
            #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file.storedAs))) == file.sha256)
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory + "/.resumable").filter { !$0.hasSuffix(".json") }
        #expect(left.isEmpty, ".resumable/ holds \(left)")
    }

    // MARK: - Checks

    /// The receipt of the complete tus upload at `url`, after checking that it was stored
    /// once in `directory`: one file, with the content's SHA-256, the one the receipt names;
    /// only the upload's state left in `.tus/`.
    func completedOnce(tusURL url: String, in directory: String) async throws -> Receipt.File {
        let state = try await tus("GET", url).validate().decode(TusState.self)
        #expect(state.complete && state.offset == Int64(Self.content.count))
        let file = try #require(state.receipt?.files.first)
        #expect(file.sha256 == sha256Hex(Self.content) && file.size == Int64(Self.content.count))
        try checkStoredOnce(file, in: directory, stateDirectory: ".tus")
        return file
    }

    /// Checks the draft's answer `done`: a receipt of one file stored once in `directory`.
    func checkDraftReceipt(_ done: UploadResponse, in directory: String) throws {
        let file = try #require(try done.decode(Receipt.self).files.first)
        #expect(file.filename == "crash.bin" && file.sha256 == sha256Hex(Self.content))
        try checkStoredOnce(file, in: directory, stateDirectory: ".resumable")
    }

    /// Checks that `file` is the only file stored in `directory`, holding the content, and
    /// that the upload left nothing but its state (`.json`) in `stateDirectory`.
    func checkStoredOnce(_ file: Receipt.File, in directory: String, stateDirectory: String) throws {
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
        #expect(stored == [file.storedAs], "the directory holds \(stored)")
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file.storedAs))) == sha256Hex(Self.content))
        let left = try FileManager.default.contentsOfDirectory(atPath: directory + "/" + stateDirectory).filter { !$0.hasSuffix(".json") }
        #expect(left.isEmpty, "\(stateDirectory)/ holds \(left)")
    }

    // MARK: - Servers and requests

    /// Runs `formpost serve`'s server storing into `directory` on a free port, its resumable
    /// receivers striking `fault`, and `body` with that port.
    func withFaultyServer<T: Sendable>(directory: String, fault: StepFault, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        try await withFaultyServer(configuration: ReceiverConfiguration(directory: directory), fault: fault, body)
    }

    /// ``withFaultyServer(directory:fault:_:)`` with receivers made with `configuration`.
    func withFaultyServer<T: Sendable>(configuration: ReceiverConfiguration, fault: StepFault, _ body: @Sendable (Int) async throws -> T) async throws -> T {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        var tus = try TusReceiver(configuration: configuration, expiry: .seconds(3600), logger: logger)
        var resumable = try ResumableUploadReceiver(receiver: receiver, expiry: .seconds(3600), logger: logger)
        tus.completionFault = fault.hook
        resumable.completionFault = fault.hook
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: tus, resumable: resumable)
        return try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }, body)
    }

    /// Starts `formpost serve` on `port` storing into `directory` (killing itself at `step`,
    /// if given); returns once it accepts.
    static func serve(port: Int, directory: String, killingAt step: CompletionStep? = nil) throws -> ChildProcess {
        let arguments = ["serve", "--port", String(port), "--dir", directory] + (step.map { ["--kill-at-completion-step", $0.rawValue] } ?? [])
        let server = try ChildProcess(formpostBinary, arguments, stdout: .discard, stderr: .discard)
        try RawSocket.waitForListenerBlocking(port: port, attempts: 400)
        return server
    }

    func tus(_ method: String, _ url: String, body: [UInt8]? = nil, headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Tus-Resumable"): "1.0.0"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: "application/offset+octet-stream") }, to: URL(string: url)!,
                                     method: RequestMethod(rawValue: method), headers: all)
    }

    func draft(_ method: RequestMethod, _ url: String, body: [UInt8]? = nil, contentType: String = "application/partial-upload",
               headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Upload-Draft-Interop-Version"): "8"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: contentType) }, to: URL(string: url)!, method: method, headers: all)
    }

    /// Creates a tus upload of the content; returns its URL.
    func createTus(base: String) async throws -> String {
        let created = try await tus("POST", base + "/files", headers: [Self.uploadLength: String(Self.content.count),
                                                                      Self.field("Upload-Metadata"): "filename " + Data("crash.bin".utf8).base64EncodedString()])
        #expect(created.status == 201, "\(created.text)")
        return base + (created.headers[.location] ?? "")
    }

    /// Creates an upload of the IETF draft holding the whole content (a file, not a form),
    /// not yet complete; returns its URL.
    func createDraft(base: String) async throws -> String {
        let created = try await draft(.post, base + "/upload", body: Self.content, contentType: "application/octet-stream",
                                      headers: [Self.uploadComplete: "?0", Self.uploadLength: String(Self.content.count),
                                                .contentDisposition: "attachment; filename=\"crash.bin\""])
        #expect(created.status == 201 && created.headers[Self.uploadOffset] == String(Self.content.count), "\(created.text)")
        return base + (created.headers[.location] ?? "")
    }
}
