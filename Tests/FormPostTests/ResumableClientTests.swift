import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
import Multipart
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `rufh_server.py` (an independent server of the IETF draft) answers to a completed form.
struct DraftServerAnswer: Decodable {
    struct Part: Decodable {
        var name: String
        var filename: String?
        var size: Int
        var sha256: String
    }

    var length: Int
    var sha256: String
    var parts: [Part]
}

/// One append as `rufh_server.py` logs it.
struct DraftServerAppend: Decodable {
    var offset: Int64
    var declared: Int64
    var received: Int64
    var kept: Int64
}

/// FormPost's client of the IETF draft (``ResumableUploader``) against an independent server
/// in Python — one that keeps nothing of a cut request, one that stalls, one with a
/// `max-append-size` — and against `formpost serve`; `formpost --resumable ietf` killed and
/// run again; and the stall and termination of tus uploads.
@Suite("Resumable uploads sent (IETF draft)")
struct ResumableClientTests {
    /// Runs `rufh_server.py` with `options` on a free port, then `body` with its port and its log.
    func withDraftServer<T: Sendable>(_ directory: SampleDirectory, options: [String] = [], _ body: @Sendable (Int, String) async throws -> T) async throws -> T {
        let port = try freePort()
        let log = directory.path + "/appends.log"
        let server = try ChildProcess("python3", [Subprocess.interopScript("rufh_server.py"), String(port), log] + options, stdout: .discard, stderr: .inherit)
        defer { server.stop() }
        try await RawSocket.waitForListener(port: port, attempts: 400)
        return try await body(port, log)
    }

    func appends(_ log: String) throws -> [DraftServerAppend] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { try JSONDecoder().decode(DraftServerAppend.self, from: Data($0.utf8)) }
    }

    func form(_ directory: SampleDirectory, size: Int) throws -> (MultipartForm, [String: String]) {
        var form = MultipartForm()
        form.append(name: "title", value: "Holiday ✓")
        form.append(name: "tags[]", value: "sea")
        let big = try directory.file("clip.bin", size: size, seed: 11)
        let small = try directory.file("note.txt", size: 1000, seed: 12)
        try form.append(name: "clip", fileAt: big)
        try form.append(name: "note", fileAt: small)
        let digests = try ["clip": big, "note": small].mapValues { sha256Hex(try Data(contentsOf: URL(fileURLWithPath: $0))) }
        return (form, digests)
    }

    @Test("a form to a server that keeps nothing of a cut request, through a proxy that cuts three: no retry gains anything until the requests are halved, and the form arrives whole")
    func halvesForAServerThatKeepsNothing() async throws {
        let directory = try SampleDirectory()
        let (form, digests) = try form(directory, size: 10 << 20)
        let state = ResumeStateStore(directory: directory.path + "/state")
        let (result, appended) = try await withDraftServer(directory, options: ["--discard-partial"]) { port, log in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 1_500_000, cuts: 3, log: directory.path + "/cuts.log")
            defer { proxy.stop() }
            let uploader = ResumableUploader(chunkSize: 4 << 20, retry: RetryPolicy(maxRetries: 6, baseDelay: .milliseconds(20)), stateStore: state)
            let result = try await uploader.upload(form, to: URL(string: "http://127.0.0.1:\(proxyPort)/project/files")!)
            return (result, try appends(log))
        }
        #expect(result.response.status == 200 && result.response.headers[HTTPField.Name("Upload-Complete")!] == "?1")
        let answer = try result.response.decode(DraftServerAnswer.self)
        #expect(answer.parts.map(\.name) == ["title", "tags[]", "clip", "note"])
        #expect(answer.parts.filter { $0.filename != nil }.map(\.sha256) == [digests["clip"], digests["note"]])
        let cut = appended.filter { $0.received < $0.declared }
        #expect(cut.count >= 2 && cut.allSatisfy { $0.kept == 0 }, "\(appended)")
        #expect(appended.map(\.declared).contains(1 << 20), "requests were halved down to 1 MiB: \(appended.map(\.declared))")
        #expect(appended.first?.declared == 4 << 20)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.directory).isEmpty, "a completed upload's entry is removed")
    }

    @Test("a request that makes no progress (a server that never reads it) fails after the stall timeout; the upload asks for the offset and completes")
    func stalledRequest() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 3 << 20, seed: 3)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let (result, appended) = try await withDraftServer(directory, options: ["--stall-first-append"]) { port, log in
            // 3 s: a full run of the suites on 2 cores left a request that was being read
            // without progress for more than 1 s.
            let uploader = ResumableUploader(chunkSize: 1 << 20, retry: RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(20)), stateStore: nil,
                                             stallTimeout: .seconds(3))
            // Without the stall timeout the first append would wait for an hour: two minutes is a hang.
            let result = try await withThrowingTaskGroup(of: ResumableUploadResult?.self) { group in
                group.addTask { try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(port)/put")!, method: .put) }
                group.addTask {
                    try await Task.sleep(for: .seconds(120))
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            return (try #require(result, "the upload was still waiting on the stalled request after two minutes"), try appends(log))
        }
        #expect(try result.response.decode(DraftServerAnswer.self).sha256 == expected)
        #expect(appended.map(\.offset) == [0, 1 << 20, 2 << 20], "the stalled append was never read; the others were: \(appended)")
    }

    @Test("requests stay within the server's max-append-size")
    func maxAppendSize() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 3 << 20 + 5, seed: 4)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let (result, appended) = try await withDraftServer(directory, options: ["--max-append", String(1 << 20)]) { port, log in
            let uploader = ResumableUploader(chunkSize: 8 << 20, stateStore: nil)
            return (try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(port)/put")!), try appends(log))
        }
        #expect(try result.response.decode(DraftServerAnswer.self).sha256 == expected)
        #expect(appended.map(\.declared) == [1 << 20, 1 << 20, 1 << 20, 5])
    }

    @Test("a form to formpost serve through a proxy that cuts three requests: the receipt lists every field and file, and the stored files are intact")
    func formToReceiverThroughCuts() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let (form, digests) = try form(directory, size: 6 << 20)
        let log = directory.path + "/cuts.log"
        let result = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 1_000_000, cuts: 3, log: log)
            defer { proxy.stop() }
            let uploader = ResumableUploader(chunkSize: 2 << 20, retry: RetryPolicy(maxRetries: 8, baseDelay: .milliseconds(20)),
                                             stateStore: ResumeStateStore(directory: directory.path + "/state"))
            return try await uploader.upload(form, to: URL(string: "http://127.0.0.1:\(proxyPort)/upload")!)
        }
        #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == 3)
        let receipt = try result.response.decode(Receipt.self)
        #expect(receipt.fields == [.init(name: "title", value: "Holiday ✓"), .init(name: "tags[]", value: "sea")])
        #expect(receipt.files.map(\.name) == ["clip", "note"] && receipt.files.map(\.sha256) == [digests["clip"], digests["note"]])
        for file in receipt.files {
            #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs))) == file.sha256)
        }
    }

    @Test("over URLSession (FoundationNetworking here), the same exchange uploads a form and a file to formpost serve")
    func overURLSession() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let (form, digests) = try form(directory, size: 3 << 20)
        let raw = try directory.file("raw.bin", size: 2 << 20, seed: 13)
        let transport = URLSessionTransport()
        defer { transport.invalidate() }
        let (formReceipt, fileReceipt) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let uploader = ResumableUploader(client: FormPostClient(transport: transport), chunkSize: 1 << 20, stateStore: nil)
            let url = URL(string: "http://127.0.0.1:\(port)/upload")!
            let formResult = try await uploader.upload(form, to: url)
            let fileResult = try await uploader.upload(fileAt: raw, to: url, method: .put)
            return (try formResult.response.decode(Receipt.self), try fileResult.response.decode(Receipt.self))
        }
        #expect(formReceipt.files.map(\.sha256) == [digests["clip"], digests["note"]])
        #expect(fileReceipt.files.map(\.filename) == ["raw.bin"])
        #expect(fileReceipt.files.map(\.sha256) == [sha256Hex(try Data(contentsOf: URL(fileURLWithPath: raw)))])
    }

    @Test("formpost --resumable ietf -F killed with SIGKILL mid-upload resumes when run again, sending only what the server lacks; the receipt is the form's")
    func commandKilledAndResumed() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("big.bin", size: 48 << 20, seed: 6)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let answer = directory.path + "/answer.json"
        let (first, second) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            try await killedAndRunAgain(["--resumable", "ietf", "--chunk-size", "8M", "-F", "title=kept", "-F", "big=@" + file, "http://127.0.0.1:\(port)/upload"],
                                        again: ["-o", answer], stateHome: directory.path + "/state", stateDirectory: uploads.path + "/.resumable")
        }
        #expect(first == -SIGKILL || first == 128 + SIGKILL || first == SIGKILL, "the first run ended by SIGKILL, not with \(first)")
        #expect(second.status == 0, "\(String(decoding: second.stderr, as: UTF8.self))")
        let summary = try #require(try JSONSerialization.jsonObject(with: second.stdout) as? [String: Any])
        let resumedFrom = try #require(summary["resumed_from"] as? Int)
        let sent = try #require(summary["bytes_sent"] as? Int)
        #expect(resumedFrom > 0 && sent < 48 << 20, "resumed from \(resumedFrom), sent \(sent)")
        let receipt = try JSONDecoder().decode(Receipt.self, from: Data(contentsOf: URL(fileURLWithPath: answer)))
        #expect(receipt.fields == [.init(name: "title", value: "kept")] && receipt.files.map(\.sha256) == [expected])
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 1, "one file stored: \(stored)")
    }

    @Test("a target that answers the creation without an upload resource is not a resumable one: protocolUnsupported, nothing else sent")
    func notResumable() async throws {
        let server = try TestServer()
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 1000)
        let error = try await server.run { base in
            do {
                _ = try await ResumableUploader(stateStore: nil).upload(fileAt: file, to: base.appendingPathComponent("digest"))
                return nil as ResumableUploadError?
            } catch let error as ResumableUploadError {
                return error
            }
        }
        guard case .protocolUnsupported(let status, _) = try #require(error) else {
            Issue.record("expected protocolUnsupported, got \(String(describing: error))")
            return
        }
        #expect(status == 200)
    }
}

extension TusClientTests {
    @Test("TusUploader with checksums to formpost serve through a proxy that cuts three appends: nothing of a cut append counts, so every offset is a request boundary, and the file is intact")
    func checksumsThroughCuts() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("data.bin", size: 12 << 20, seed: 8)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let acknowledged = UploadsSeen()
        let result = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 1_500_000, cuts: 3, log: directory.path + "/cuts.log")
            defer { proxy.stop() }
            let uploader = TusUploader(chunkSize: 4 << 20, retry: RetryPolicy(maxRetries: 8, baseDelay: .milliseconds(20)), stateStore: nil, checksums: true)
            return try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(proxyPort)/files")!) { progress in
                acknowledged.add(progress.acknowledged)
            }
        }
        #expect(result.bytesSent == 12 << 20)
        #expect(acknowledged.values.allSatisfy { $0 % (1 << 20) == 0 }, "offsets: \(Set(acknowledged.values).sorted())")
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 1)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + (stored.first ?? "")))) == expected)
    }

    @Test("terminate ends an upload (DELETE): the server forgets it; abandonUpload ends the one an earlier run left and forgets its entry")
    func termination() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("data.bin", size: 4 << 20, seed: 9)
        let state = ResumeStateStore(directory: directory.path + "/state")
        try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let endpoint = URL(string: "http://127.0.0.1:\(port)/files")!
            let tus: HTTPFields = [HTTPField.Name("Tus-Resumable")!: "1.0.0"]
            // A run that stops after its first acknowledged request leaves its entry.
            let uploader = TusUploader(chunkSize: 1 << 20, retry: .none, stateStore: state)
            let canceller = TaskCanceller()
            let run = Task {
                try await uploader.upload(fileAt: file, to: endpoint) { progress in
                    if progress.acknowledged >= 1 << 20 { canceller.cancel() }
                }
            }
            canceller.set(run)
            _ = try? await run.value
            let kept = try #require(try await uploader.abandonUpload(fileAt: file, to: endpoint))
            #expect(try await FormPostClient().send(nil, to: kept, method: .head, headers: tus).status == 404)
            #expect(try FileManager.default.contentsOfDirectory(atPath: state.directory).isEmpty)
            #expect(try await uploader.abandonUpload(fileAt: file, to: endpoint) == nil, "nothing is kept any more")
            let created = try await FormPostClient().send(nil, to: endpoint, method: .post, headers: tus + [HTTPField.Name("Upload-Length")!: "10"])
            let url = try #require(URL(string: created.headers[.location] ?? "", relativeTo: endpoint)?.absoluteURL)
            try await uploader.terminate(url)
            #expect(try await FormPostClient().send(nil, to: url, method: .head, headers: tus).status == 404)
        }
    }
}

/// Cancels a task from a progress handler, which runs elsewhere.
final class TaskCanceller: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<ResumableUploadResult, any Error>?
    private var cancelled = false

    func set(_ task: Task<ResumableUploadResult, any Error>) {
        lock.withLock {
            self.task = task
            if cancelled { task.cancel() }
        }
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            task?.cancel()
        }
    }
}
