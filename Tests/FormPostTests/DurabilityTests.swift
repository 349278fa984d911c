import Crypto
import Foundation
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Logging
import Synchronization
import Testing

/// What the receivers acknowledge is on the disk: the syncs (`fdatasync`, `fsync` of a
/// directory) each makes before it answers, as ``FileSync``'s recorder sees them for the
/// test's own directory; a state file found torn at start is reported and its upload's
/// files kept; a second process on a state directory is refused.
@Suite("Durability of what the receivers acknowledge")
struct DurabilityTests {
    /// `path` as the system resolves it (the recorder names files by their resolved paths).
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// A storage directory whose syncs are recorded: its resolved path.
    static func watchedDirectory(_ sample: SampleDirectory) -> String {
        let path = resolved(sample.path)
        FileSync.recorder.watch(path)
        return path
    }

    static func tus(_ method: String, _ path: String, port: Int, headers: [String: String] = [:], body: [UInt8] = []) throws -> SourcedHTTP.Answer {
        try SourcedHTTP.send(method, path, port: port, from: "127.0.0.1", headers: headers.merging(["Tus-Resumable": "1.0.0"]) { $1 }, body: body)
    }

    @Test("tus: a creation syncs the state and its directory, an append syncs the data before its offset is answered, a completion syncs the stored file and its directory")
    func tusSyncsBeforeAnswering() async throws {
        let sample = try SampleDirectory()
        let storage = Self.watchedDirectory(sample)
        let state = storage + "/.tus"
        let content = Array("durable before acknowledged".utf8)
        try await withUploadServer(directory: storage, resumableExpiry: .seconds(3600)) { port in
            let created = try await offPool { try Self.tus("POST", "/files", port: port, headers: ["Upload-Length": String(content.count)]) }
            #expect(created.status == 201)
            let location = try #require(created.headers["location"])
            let id = String(location.split(separator: "/").last ?? "")
            let afterCreation = FileSync.recorder.events(under: storage)
            #expect(afterCreation.contains(.data(state + "/" + id + ".json.tmp")), "the state is synced before it is renamed: \(afterCreation)")
            #expect(afterCreation.last == .directory(state), "the state directory is synced last, before the answer: \(afterCreation)")

            let first = try await offPool {
                try Self.tus("PATCH", location, port: port, headers: ["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"],
                             body: Array(content[..<10]))
            }
            #expect(first.status == 204 && first.headers["upload-offset"] == "10")
            let afterAppend = Array(FileSync.recorder.events(under: storage).dropFirst(afterCreation.count))
            #expect(afterAppend == [.data(state + "/" + id + ".data")], "one sync of the data per append: \(afterAppend)")

            let rest = try await offPool {
                try Self.tus("PATCH", location, port: port, headers: ["Upload-Offset": "10", "Content-Type": "application/offset+octet-stream"],
                             body: Array(content[10...]))
            }
            #expect(rest.status == 204)
            let stored = try #require(UploadAdmissionTests.names(in: storage).first { !$0.hasPrefix(".") })
            let afterCompletion = FileSync.recorder.events(under: storage).dropFirst(afterCreation.count + afterAppend.count)
            #expect(afterCompletion.contains(.data(state + "/" + id + ".data")), "the appended bytes: \(afterCompletion)")
            #expect(afterCompletion.contains(.directory(storage)), "the directory the stored file was linked into: \(afterCompletion)")
            #expect(afterCompletion.last == .directory(state), "the complete state, saved last: \(afterCompletion)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: storage + "/" + stored)) == Data(content))
        }
    }

    @Test("tus: an append whose checksum does not hold is cut back, and the data's new size synced, before the state that drops it is saved")
    func tusUndoSyncsTheCut() async throws {
        let sample = try SampleDirectory()
        let storage = Self.watchedDirectory(sample)
        let state = storage + "/.tus"
        let content = Array("bytes whose checksum is another's".utf8)
        try await withUploadServer(directory: storage, resumableExpiry: .seconds(3600)) { port in
            let created = try await offPool { try Self.tus("POST", "/files", port: port, headers: ["Upload-Length": String(content.count)]) }
            let location = try #require(created.headers["location"])
            let id = String(location.split(separator: "/").last ?? "")
            let before = FileSync.recorder.events(under: storage).count
            let wrong = "sha256 " + Data(SHA256.hash(data: Array("other".utf8))).base64EncodedString()
            let refused = try await offPool {
                try Self.tus("PATCH", location, port: port, headers: ["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream",
                                                                      "Upload-Checksum": wrong], body: content)
            }
            #expect(refused.status == 460)
            let events = Array(FileSync.recorder.events(under: storage).dropFirst(before))
            // The append's bytes are synced as it ends, then, cut back, the data's new size.
            let saved = try #require(events.lastIndex(of: .data(state + "/" + id + ".json.tmp")), "\(events)")
            let dataSyncs = events[..<saved].filter { $0 == .data(state + "/" + id + ".data") }.count
            #expect(dataSyncs == 2, "the cut data is synced before the state is saved: \(events)")
            #expect(FileManager.default.contents(atPath: state + "/" + id + ".data")?.isEmpty == true)
        }
    }

    @Test("a resumable form: an append syncs the part's file, the form's other bytes and the state directory before its offset is answered")
    func resumableFormSyncsBeforeAnswering() async throws {
        let sample = try SampleDirectory()
        let storage = Self.watchedDirectory(sample)
        let state = storage + "/.resumable"
        let form = Array("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nsome file content\r\n--b--\r\n".utf8)
        try await withUploadServer(directory: storage, resumableExpiry: .seconds(3600)) { port in
            let created = try await offPool {
                try SourcedHTTP.send("POST", "/upload", port: port, from: "127.0.0.1", headers: [
                    "Upload-Draft-Interop-Version": "8", "Upload-Complete": "?0", "Upload-Length": String(form.count),
                    "Content-Type": "multipart/form-data; boundary=b",
                ], body: Array(form[..<80]))
            }
            #expect([201, 200].contains(created.status), "\(created.status) \(created.text)")
            let location = try #require(created.headers["location"])
            let id = String(location.split(separator: "/").last ?? "")
            let events = FileSync.recorder.events(under: storage)
            #expect(events.contains(.data(state + "/" + id + ".part-0")), "the part's file: \(events)")
            #expect(events.contains(.data(state + "/" + id + ".data")), "the form's bytes besides its parts' content: \(events)")
            #expect(events.last == .directory(state), "the state directory, where the append made files: \(events)")
        }
    }

    @Test("a multipart upload with synced durability syncs each file and then its directory before the receipt; with page-cache durability it syncs nothing",
          arguments: ReceiptDurability.allCases)
    func multipartDurability(_ durability: ReceiptDurability) async throws {
        let sample = try SampleDirectory()
        let storage = Self.watchedDirectory(sample)
        let form = Array("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nstored\r\n--b\r\nContent-Disposition: form-data; name=\"g\"; filename=\"b.txt\"\r\n\r\nand this\r\n--b--\r\n".utf8)
        let configuration = ReceiverConfiguration(directory: storage, durability: durability)
        try await withUploadServer(directory: storage, configuration: configuration) { port in
            let answer = try await offPool {
                try SourcedHTTP.send("POST", "/", port: port, from: "127.0.0.1", headers: ["Content-Type": "multipart/form-data; boundary=b"], body: form)
            }
            #expect(answer.status == 200, "\(answer.text)")
            let events = FileSync.recorder.events(under: storage)
            switch durability {
            case .synced:
                #expect(events.count == 3, "two files, then the directory once: \(events)")
                #expect(events.prefix(2).allSatisfy { if case .data(let path) = $0 { path.contains("/.partial-") } else { false } }, "\(events)")
                #expect(events.last == .directory(storage), "\(events)")
            case .pageCache:
                #expect(events.isEmpty, "\(events)")
            }
        }
    }

    @Test("a torn state file found at start is reported, and its upload's files are kept for repair")
    func tornStateReportedAndKept() async throws {
        let sample = try SampleDirectory()
        let state = sample.path + "/.tus"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let id = UploadStore.randomName()
        #expect(FileManager.default.createFile(atPath: state + "/" + id + ".json", contents: Data("{\"created\":17".utf8)))
        #expect(FileManager.default.createFile(atPath: state + "/" + id + ".data", contents: Data("acknowledged bytes".utf8)))
        let log = CapturedLog()
        let configuration = ReceiverConfiguration(directory: sample.path, idleUploadExpiry: .milliseconds(100))
        try await withUploadServer(directory: sample.path, configuration: configuration, resumableExpiry: .milliseconds(200),
                                   logger: Logger(label: "test") { _ in log }) { port in
            let head = try await offPool { try Self.tus("HEAD", "/files/" + id, port: port) }
            #expect(head.status == 404)
            // Several sweeps (every 50 ms here) pass: none removes what it cannot read.
            try await Task.sleep(for: .milliseconds(500))
        }
        let reports = log.entries.filter { $0.level >= .error && $0.message.contains(state + "/" + id + ".json") }
        #expect(reports.count == 1, "reported once as an error, naming the file: \(log.entries)")
        #expect(Set(UploadAdmissionTests.names(in: state)).isSuperset(of: [id + ".json", id + ".data"]), "kept: \(UploadAdmissionTests.names(in: state))")
    }

    @Test("a second formpost serve on a state directory another process holds exits 75 with a clear message and touches none of its files")
    func secondProcessRefused() async throws {
        let sample = try SampleDirectory()
        let state = sample.path + "/state"
        let configuration = ReceiverConfiguration(directory: sample.path, stateDirectory: state)
        let first = try TusReceiver(configuration: configuration)
        // What the first has in flight: a state being saved, and an upload's data.
        let id = UploadStore.randomName()
        let inFlight = [state + "/tus/" + id + ".json.tmp", state + "/tus/" + id + ".data"]
        for path in inFlight { #expect(FileManager.default.createFile(atPath: path, contents: Data("in flight".utf8))) }
        let second = try ChildProcess(formpostBinary, ["serve", "--port", "0", "--dir", sample.path, "--state-dir", state])
        let finished = try second.finish(timeout: 60)
        let message = String(decoding: finished.stderr, as: UTF8.self)
        #expect(finished.status == 75, "\(finished.status): \(message)")
        #expect(message.contains("state directory \(state)/tus is in use by another process"), "\(message)")
        for path in inFlight { #expect(FileManager.default.fileExists(atPath: path), "\(path) is untouched") }
        // Within one process, a receiver made again on the directory (a restart) takes it over.
        _ = try TusReceiver(configuration: configuration)
        _ = first
    }

    @Test("formpost serve with --state-dir does not move the uploads of a process still receiving in the hidden directory: it exits 75 and they stay")
    func stateDirectoryMoveRefusedWhileHeld() async throws {
        let sample = try SampleDirectory()
        // The first receives in DIR/.tus, as without --state-dir.
        let first = try TusReceiver(configuration: ReceiverConfiguration(directory: sample.path))
        let id = UploadStore.randomName()
        let upload = [sample.path + "/.tus/" + id + ".json", sample.path + "/.tus/" + id + ".data"]
        for path in upload { #expect(FileManager.default.createFile(atPath: path, contents: Data("in flight".utf8))) }
        let second = try ChildProcess(formpostBinary, ["serve", "--port", "0", "--dir", sample.path, "--state-dir", sample.path + "/state", "--no-resumable"])
        let finished = try second.finish(timeout: 60)
        let message = String(decoding: finished.stderr, as: UTF8.self)
        #expect(finished.status == 75, "\(finished.status): \(message)")
        #expect(message.contains("state directory \(sample.path)/.tus is in use by another process"), "\(message)")
        for path in upload { #expect(FileManager.default.fileExists(atPath: path), "\(path) was moved") }
        _ = first
    }
}
