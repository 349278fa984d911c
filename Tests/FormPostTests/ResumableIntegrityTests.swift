import Foundation
import FormPost
import FormPostFoundation
import Logging
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Multipart
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a resumable receiver acknowledged stays: requests that could move or make an
/// upload's files do so under its lock only, a form that ends early gets its final answer,
/// and what a request cannot see (a form's parse, an upload whose completion is held) never
/// makes it read less, or lose what it holds.
@Suite("Resumable uploads: nothing acknowledged is lost")
struct ResumableIntegrityTests {
    let crash = CompletionCrashTests()
    static let uploadOffset = CompletionCrashTests.uploadOffset, uploadComplete = CompletionCrashTests.uploadComplete
    static let options = RequestMethod(rawValue: "OPTIONS")

    // MARK: - Moving a form's files

    @Test("draft: OPTIONS on a form whose completion is held after its answer was saved moves none of its files, and the completion then stores each once")
    func optionsMovesNothing() async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.hold, at: .formAnswered)
        try await crash.withFaultyServer(directory: uploads.path, fault: fault) { [crash] port in
            let url = try await crash.createForm(base: "http://127.0.0.1:\(port)")
            let completing = Task {
                try await crash.draft(.patch, url, body: [], headers: [Self.uploadOffset: String(CompletionCrashTests.form.count), Self.uploadComplete: "?1"])
            }
            let held = try await offPool { fault.waitUntilHeld() }
            #expect(held, "the completion reached \(CompletionStep.formAnswered.rawValue)")
            let options = try await crash.draft(Self.options, url)
            let parts = try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.resumable").filter { $0.contains(".part-") }
            let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
            fault.release()
            #expect(options.status == 204, "\(options.status) \(options.text)")
            #expect(fault.count == 1, "OPTIONS took a step of the completion (\(fault.count) in all)")
            #expect(parts.count == 2 && stored.isEmpty, "while the completion was held, OPTIONS left .resumable/ with \(parts) and stored \(stored)")
            try crash.checkFormReceipt(try await completing.value, in: uploads.path)
        }
    }

    @Test("storing a form's part never replaces a file stored under its name (a part's file made again after it moved is dropped), and an empty part's file is made in the directory")
    func storePartKeepsWhatIsStored() throws {
        let uploads = try SampleDirectory()
        let store = try UploadStore(directory: uploads.path, stateRoot: nil, name: "resumable", fileMode: 0o640)
        let segments = FormSegments(store: store, id: UploadStore.randomName())
        let stored = UploadStore.randomName(), empty = UploadStore.randomName()
        let content = Data("the part's content, stored".utf8)
        try content.write(to: URL(fileURLWithPath: uploads.path + "/" + stored))
        #expect(FileManager.default.createFile(atPath: segments.partPath(0), contents: Data()))
        try segments.storePart(0, as: stored)
        #expect(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + stored)) == content, "the stored file was replaced")
        #expect(access(segments.partPath(0), F_OK) != 0, "the part's file is left")
        try segments.storePart(1, as: empty)
        let attributes = try FileManager.default.attributesOfItem(atPath: uploads.path + "/" + empty)
        #expect((attributes[.size] as? NSNumber)?.intValue == 0 && (attributes[.posixPermissions] as? NSNumber)?.intValue == 0o640)
        #expect(access(segments.partPath(1), F_OK) != 0, "the empty part's file was made in the state directory")
        try segments.storePart(1, as: empty)
    }

    // MARK: - A form that ends early

    @Test("draft: a form whose closing delimiter is cut short, sent to its end with Upload-Complete: ?1, is answered 400 (malformed) for good, not as of an inconsistent length",
          arguments: [4, 7], [false, true])
    func closingDelimiterCutShort(missing: Int, appended: Bool) async throws {
        let uploads = try SampleDirectory()
        let form = Array(CompletionCrashTests.form.dropLast(missing))
        let contentType = "multipart/form-data; boundary=crash"
        try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { [crash] port in
            let base = "http://127.0.0.1:\(port)"
            let answer: UploadResponse
            let url: String
            if appended {
                let half = form.count / 2
                let created = try await crash.draft(.post, base + "/upload", body: Array(form[..<half]), contentType: contentType,
                                                    headers: [Self.uploadComplete: "?0"])
                url = base + (created.headers[.location] ?? "")
                let offset = created.headers[Self.uploadOffset] ?? "0"
                answer = try await crash.draft(.patch, url, body: Array(form[(Int(offset) ?? 0)...]), headers: [Self.uploadOffset: offset, Self.uploadComplete: "?1"])
            } else {
                answer = try await crash.draft(.post, base + "/upload", body: form, contentType: contentType, headers: [Self.uploadComplete: "?1"])
                url = base + (answer.headers[.location] ?? "")
            }
            #expect(answer.status == 400 && answer.headers[Self.uploadComplete] == "?1" && answer.text.contains("closing delimiter"),
                    "\(answer.status) \(answer.headers[Self.uploadComplete] ?? "-") \(answer.text)")
            let head = try await crash.draft(.head, url)
            #expect(head.headers[Self.uploadComplete] == "?1", "HEAD afterwards: \(head.headers)")
            #expect(try await crash.draft(.get, url).body == answer.body, "the answer is kept")
            let left = try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.resumable").filter { !$0.hasSuffix(".json") && !$0.hasPrefix(".") }
            #expect(left.isEmpty, ".resumable/ holds \(left)")
        }
    }

    // MARK: - A full offset means stored

    @Test("tus: a completion whose step fails leaves the full offset, and with no request on the upload the sweep stores it: one file, with its SHA-256",
          arguments: CompletionStep.ofOneFile)
    func tusSweepCompletes(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.fail, at: step)
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(20))
        try await withReceivers(configuration, fault: fault) { [crash] port, _ in
            let url = try await crash.createTus(base: "http://127.0.0.1:\(port)")
            let failed = try await crash.tus("PATCH", url, body: CompletionCrashTests.content, headers: [Self.uploadOffset: "0"])
            #expect(failed.status == 500 && fault.count == 1, "the completion failing \(step.rawValue) answered \(failed.status)")
            let id = String(url.split(separator: "/").last ?? "")
            let stored = try await offPool { Self.waitUntil { Self.stateSays(uploads.path + "/.tus/" + id + ".json", has: "file") } }
            #expect(stored, "no sweep stored the upload whose completion failed \(step.rawValue)")
            _ = try await crash.completedOnce(tusURL: url, in: uploads.path)
        }
    }

    @Test("draft: a representation whose completion fails before it is recorded is stored by the sweep, with no request on it: one file, with its SHA-256")
    func draftSweepCompletesUnrecorded() async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.fail, at: .beforeRecording)
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(20))
        try await withReceivers(configuration, fault: fault) { [crash] port, _ in
            let failed = try await crash.draft(.post, "http://127.0.0.1:\(port)/upload", body: CompletionCrashTests.content, contentType: "application/octet-stream",
                                               headers: [Self.uploadComplete: "?1"])
            #expect(failed.status == 500 && fault.count == 1, "the completion failing before it was recorded answered \(failed.status)")
            // The 500 names no upload (the client learnt it from a 104, which this one ignores): its state does.
            let states = try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.resumable").filter { $0.hasSuffix(".json") }
            try #require(states.count == 1, "states: \(states)")
            let id = String(states[0].dropLast(".json".count))
            // The sweep (every 10 s here) stores it, within 30 s.
            let stored = try await offPool { Self.waitUntil { Self.stateSays(uploads.path + "/.resumable/" + id + ".json", has: "answer") } }
            #expect(stored, "no sweep stored the upload whose completion failed before it was recorded")
            let files = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
            let content = try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + (files.first ?? "")))
            #expect(files.count == 1 && sha256Hex(content) == sha256Hex(CompletionCrashTests.content), "the directory holds \(files)")
        }
    }

    @Test("tus: a receiver started on a directory holding an upload whose completion failed stores it at start, before any request")
    func tusStartCompletes() async throws {
        let uploads = try SampleDirectory()
        // Failing always, and from the start: the first receiver's own sweep (every 10 s)
        // cannot store it either, however long a loaded machine keeps it running.
        let fault = StepFault(.failAlways, at: .beforeLink)
        let configuration = ReceiverConfiguration(directory: uploads.path)
        let receiver = try UploadReceiver(configuration: configuration, logger: Self.quiet)
        let tus = try TusReceiver(configuration: configuration, expiry: .seconds(3600), logger: Self.quiet, completionFault: fault.hook)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: tus)
        let url = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { [crash] port in
            let url = try await crash.createTus(base: "http://127.0.0.1:\(port)")
            #expect(try await crash.tus("PATCH", url, body: CompletionCrashTests.content, headers: [Self.uploadOffset: "0"]).status == 500)
            return url
        }
        let id = String(url.split(separator: "/").last ?? "")
        #expect(!Self.stateSays(uploads.path + "/.tus/" + id + ".json", has: "file"), "the first server stored it")
        _ = try TusReceiver(configuration: configuration, expiry: .seconds(3600), logger: Self.quiet)
        #expect(Self.stateSays(uploads.path + "/.tus/" + id + ".json", has: "file"), "the receiver's start did not store the upload")
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        let content = try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + (stored.first ?? "")))
        #expect(stored.count == 1 && sha256Hex(content) == sha256Hex(CompletionCrashTests.content), "the directory holds \(stored)")
    }

    @Test("draft: a form whose completion fails after its answer is saved has its files moved by the sweep, with no request on it",
          arguments: CompletionStep.ofForm)
    func draftSweepMovesFormFiles(step: CompletionStep) async throws {
        let uploads = try SampleDirectory()
        let fault = StepFault(.fail, at: step)
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(20))
        try await withReceivers(configuration, fault: fault) { [crash] port, _ in
            let url = try await crash.createForm(base: "http://127.0.0.1:\(port)")
            let failed = try await crash.draft(.patch, url, body: [], headers: [Self.uploadOffset: String(CompletionCrashTests.form.count), Self.uploadComplete: "?1"])
            #expect(failed.status == 500 && fault.count == 1, "the completion failing \(step.rawValue) answered \(failed.status)")
            let moved = try await offPool {
                Self.waitUntil { ((try? FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.resumable")) ?? ["?"]).allSatisfy { $0.hasSuffix(".json") || $0.hasPrefix(".") } }
            }
            #expect(moved, "no sweep moved the form's files")
            try crash.checkFormReceipt(try await crash.draft(.get, url), in: uploads.path)
        }
    }

    // MARK: - Forms' parses made again

    @Test("draft: with more forms in progress than parses kept, an append whose parse was let go reads the form's bytes besides its files' content, not all of it; the receipts are the plain receiver's")
    func parsesMadeAgainReadLittle() async throws {
        let uploads = try SampleDirectory()
        let forms = (0..<5).map { Self.twoFileForm(seed: UInt8($0)) }
        let chunk = 16 << 10
        let configuration = ReceiverConfiguration(directory: uploads.path)
        let rebuilds = try await withReceivers(configuration, formProgressCapacity: 2) { [crash] port, resumable in
            let base = "http://127.0.0.1:\(port)"
            var urls: [String] = []
            var offsets: [Int] = []
            for form in forms {
                let created = try await crash.draft(.post, base + "/upload", body: Array(form.bytes[..<chunk]), contentType: "multipart/form-data; boundary=crash",
                                                    headers: [Self.uploadComplete: "?0"])
                #expect(created.status == 201, "\(created.status) \(created.text)")
                urls.append(base + (created.headers[.location] ?? ""))
                offsets.append(Int(created.headers[Self.uploadOffset] ?? "") ?? 0)
            }
            var answers: [UploadResponse?] = Array(repeating: nil, count: forms.count)
            while answers.contains(where: { $0 == nil }) {
                for index in forms.indices where answers[index] == nil {
                    let bytes = forms[index].bytes
                    let end = min(offsets[index] + chunk, bytes.count)
                    let last = end == bytes.count
                    let answer = try await crash.draft(.patch, urls[index], body: Array(bytes[offsets[index]..<end]),
                                                       headers: [Self.uploadOffset: String(offsets[index]), Self.uploadComplete: last ? "?1" : "?0"])
                    if last {
                        answers[index] = answer
                    } else {
                        #expect(answer.status == 204, "\(answer.status) \(answer.text)")
                        offsets[index] = try #require(Int(answer.headers[Self.uploadOffset] ?? ""))
                    }
                }
            }
            for (answer, form) in zip(answers, forms) {
                let receipt = try #require(try answer?.decode(Receipt.self), "\(answer?.status ?? 0) \(answer?.text ?? "")")
                #expect(receipt.fields == [.init(name: "note", value: "hello")])
                #expect(receipt.files.map(\.sha256) == form.files.map { sha256Hex($0) })
                for (file, content) in zip(receipt.files, form.files) {
                    #expect(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs)) == Data(content))
                }
            }
            return resumable.formProgresses.rebuilds
        }
        let total = forms.reduce(0) { $0 + $1.bytes.count }
        #expect(rebuilds.count >= 20, "only \(rebuilds.count) parses were made again: the test did not let parses go")
        // Each file's content is read at most once more (for its SHA-256); the rest of a form is a few hundred bytes.
        #expect(rebuilds.bytesRead <= Int64(total + rebuilds.count * 1024),
                "\(rebuilds.count) parses made again read \(rebuilds.bytesRead) bytes of forms of \(total) bytes in all")
    }

    // MARK: - A split that stopped midway

    @Test("draft: a form whose split stopped midway (its raw bytes aside, ID.data cut back) keeps every byte received: the sweep's census counts them, HEAD answers all of them, also after an empty append, and it completes with the plain receiver's receipt")
    func splitStoppedMidway() async throws {
        let (form, files) = ResumableFormTests.form()
        let contentType = "multipart/form-data; boundary=\(ResumableFormTests.boundary)"
        let uploads = try SampleDirectory()
        // In the header block of the second file: the parse holds those bytes back.
        let header = Array("name=\"b\"; filename".utf8)
        let cut = try #require(form.indices.first { form[$0...].starts(with: header) }) + 4
        let url = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { [crash] port in
            let created = try await crash.draft(.post, "http://127.0.0.1:\(port)/upload", body: Array(form[..<cut]), contentType: contentType,
                                                headers: [Self.uploadComplete: "?0"])
            #expect(created.status == 201, "\(created.text)")
            return created.headers[HTTPField.Name.location] ?? ""
        }
        let state = uploads.path + "/.resumable/"
        let id = String(url.split(separator: "/").last ?? "")
        for name in try FileManager.default.contentsOfDirectory(atPath: state) where name.hasPrefix(id) && !name.hasSuffix(".json") {
            try FileManager.default.removeItem(atPath: state + name)
        }
        try Data(form[..<cut]).write(to: URL(fileURLWithPath: state + id + ".data"))
        // A split that stopped right after it began: the raw file holds the bytes, ID.data none.
        let store = try UploadStore(directory: uploads.path, stateRoot: nil, name: "resumable", fileMode: 0o600)
        #expect(try FormSegments(store: store, id: id).beginSplitting() == Int64(cut))
        let swept = try UploadStore(directory: uploads.path, stateRoot: nil, name: "resumable", fileMode: 0o600)
        #expect(swept.look(id) == .inProgress(bytes: Int64(cut)))
        UploadExpiry(lifetime: .seconds(3600), idle: .seconds(3600), kind: .ietf).sweep(swept, locks: UploadLocks(), digests: RunningDigests(), logger: Self.quiet)
        #expect(swept.census.entry(id)?.received == Int64(cut), "the census counts \(swept.census.entry(id)?.received ?? -1) bytes received")
        let receipt = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { [crash] port in
            let base = "http://127.0.0.1:\(port)"
            #expect(try await crash.draft(.head, base + url).headers[Self.uploadOffset] == String(cut))
            let empty = try await crash.draft(.patch, base + url, body: [], headers: [Self.uploadOffset: String(cut), Self.uploadComplete: "?0"])
            #expect(empty.status == 204 && empty.headers[Self.uploadOffset] == String(cut), "\(empty.status) \(empty.headers)")
            #expect(try await crash.draft(.head, base + url).headers[Self.uploadOffset] == String(cut), "HEAD after the form was split again")
            let done = try await crash.draft(.patch, base + url, body: Array(form[cut...]), headers: [Self.uploadOffset: String(cut), Self.uploadComplete: "?1"])
            #expect(done.status == 200, "\(done.text)")
            return try done.decode(Receipt.self)
        }
        #expect(receipt.files.map(\.sha256) == files.map { sha256Hex($0) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).filter { !$0.hasSuffix(".json") && !$0.hasPrefix(".") }.isEmpty)
    }

    // MARK: - In-memory state of uploads

    @Test("tus: while one upload's unverified append settles, another upload's offset is read")
    func settlingHoldsOneUpload() throws {
        let appends = UnverifiedAppends()
        appends.begin("a", at: 10)
        let read = DispatchSemaphore(value: 0)
        var readWhileSettling = false
        try appends.end("a") {
            Thread.detachNewThread {
                _ = appends.offset(of: "b") { 42 }
                read.signal()
            }
            readWhileSettling = read.wait(timeout: .now() + 20) == .success
        }
        if !readWhileSettling { _ = read.wait(timeout: .now() + 20) }
        #expect(readWhileSettling, "reading another upload's offset waited for the settling")
        #expect(appends.offset(of: "a") { 7 } == 7, "the settled append still counts")
    }

    @Test("draft: an upload removed by the idle sweep leaves no parse kept in memory")
    func sweptFormLeavesNoParse() async throws {
        let uploads = try SampleDirectory()
        // Idle 10 s. With 300 ms, runs on a loaded machine once kept the parse after the sweep
        // and once found none right after the 201: the sweep took the upload between its
        // admission and its creating request's lock. Admission now holds the new upload for
        // that request (AdmissionLockTests). With 3 s, a full run beside the other suites once
        // found none right after the 201: more than 3 s passed between the answer and the check.
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(10))
        try await withReceivers(configuration) { [crash] port, resumable in
            let created = try await crash.draft(.post, "http://127.0.0.1:\(port)/upload", body: [], contentType: "multipart/form-data; boundary=crash",
                                                headers: [Self.uploadComplete: "?0"])
            #expect(created.status == 201, "\(created.text)")
            #expect(resumable.formProgresses.count == 1, "the empty form's parse is kept")
            let id = String((created.headers[.location] ?? "").split(separator: "/").last ?? "")
            let removed = try await offPool { Self.waitUntil { !FileManager.default.fileExists(atPath: uploads.path + "/.resumable/" + id + ".json") } }
            #expect(removed, "the idle sweep did not remove the upload")
            // The sweep lets the parse go just after the files: wait for it (bounded), do not race it.
            let letGo = try await offPool { Self.waitUntil { resumable.formProgresses.count == 0 } }
            #expect(letGo, "the removed upload's parse is still kept")
        }
    }

    // MARK: - Helpers

    static let quiet: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// A form of a field and two files of random bytes, `--crash` as its boundary.
    static func twoFileForm(seed: UInt8) -> (bytes: [UInt8], files: [[UInt8]]) {
        var random = SystemRandomNumberGenerator()
        let files = [100_000, 150_000].map { count in (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        func part(_ disposition: String, _ bytes: [UInt8]) -> [UInt8] {
            Array("--crash\r\nContent-Disposition: form-data; \(disposition)\r\n\r\n".utf8) + bytes + Array("\r\n".utf8)
        }
        let bytes = part("name=\"a\"; filename=\"a\(seed).bin\"", files[0]) + part("name=\"note\"", Array("hello".utf8))
            + part("name=\"b\"; filename=\"b\(seed).bin\"", files[1]) + Array("--crash--\r\n".utf8)
        return (bytes, files)
    }

    /// Whether the upload state at `path` holds the key `key`.
    static func stateSays(_ path: String, has key: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
        return object[key] != nil
    }

    /// Polls `condition` every 50 ms for at most 30 s; whether it held.
    static func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<600 {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    /// Runs a server whose receivers are made with `configuration` (tus at `/files`, the
    /// draft's at `/uploads`, uploads kept an hour), their completions striking `fault`, the
    /// draft's keeping at most `formProgressCapacity` parses; `body` gets the port and the
    /// draft's receiver.
    func withReceivers<T: Sendable>(_ configuration: ReceiverConfiguration, fault: StepFault? = nil, formProgressCapacity: Int? = nil,
                                    _ body: @Sendable (Int, ResumableUploadReceiver) async throws -> T) async throws -> T {
        let receiver = try UploadReceiver(configuration: configuration, logger: Self.quiet)
        var tus = try TusReceiver(configuration: configuration, expiry: .seconds(3600), logger: Self.quiet)
        var resumable = try ResumableUploadReceiver(receiver: receiver, expiry: .seconds(3600), logger: Self.quiet)
        if let fault {
            tus.completionFault = fault.hook
            resumable.completionFault = fault.hook
        }
        if let formProgressCapacity { resumable.formProgressCapacity = formProgressCapacity }
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: tus, resumable: resumable)
        return try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { [resumable] port in try await body(port, resumable) }
    }
}

extension ResumableIntegrityTests {
    @Test("tus: an upload whose every byte is acknowledged is never expired while its completion keeps failing; it is stored once the completion passes")
    func fullUploadOutlivesItsLifetime() async throws {
        let uploads = try SampleDirectory()
        // Failing before the completion is recorded touches no file: nothing but the expiry's
        // rule keeps the upload from looking inactive.
        let fault = StepFault(.failAlways, at: .beforeRecording)
        // Idle 20 s and a lifetime of 25 s: room for a loaded machine between the creation and
        // the append (a full run of the suites took more than 4 s there); sweeps every 10 s.
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(20))
        let receiver = try UploadReceiver(configuration: configuration, logger: Self.quiet)
        // The fault set at the start strikes the sweep's retries too.
        let tus = try TusReceiver(configuration: configuration, expiry: .seconds(25), logger: Self.quiet, completionFault: fault.hook)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: tus)
        let url = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { [crash] port in
            let url = try await crash.createTus(base: "http://127.0.0.1:\(port)")
            #expect(try await crash.tus("PATCH", url, body: CompletionCrashTests.content, headers: [Self.uploadOffset: "0"]).status == 500)
            let tried = fault.count, failed = ContinuousClock.now
            // Sweeps every 10 s, each trying the completion: wait until the lifetime has passed
            // and a sweep after it has tried (bounded at 120 s).
            while fault.count < tried + 3 || ContinuousClock.now - failed < .seconds(36), ContinuousClock.now - failed < .seconds(120) {
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(fault.count >= tried + 3, "the sweeps did not try the completion again")
            return url
        }
        let id = String(url.split(separator: "/").last ?? "")
        let data = uploads.path + "/.tus/" + id + ".data"
        #expect(FileManager.default.fileExists(atPath: data), "the sweep removed an upload whose every byte was acknowledged")
        // A receiver whose completion passes stores it at start, past its lifetime.
        _ = try TusReceiver(configuration: configuration, expiry: .seconds(25), logger: Self.quiet)
        #expect(Self.stateSays(uploads.path + "/.tus/" + id + ".json", has: "file"), "the upload was not stored once its completion passed")
    }
}
