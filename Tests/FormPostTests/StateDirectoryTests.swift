import Foundation
import FormPost
import FormPostServer
import Multipart
import Testing

/// `ReceiverConfiguration.stateDirectory` (`formpost serve --state-dir`): resumable uploads
/// in progress live there, so the storage directory holds stored files only; uploads kept
/// in the hidden directories before are moved there and resume; a state directory on
/// another file system is refused.
@Suite("Resumable state directory")
struct StateDirectoryTests {
    let client = FormPostClient()

    func tus(_ method: String, _ url: String, body: [UInt8]? = nil, headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [HTTPField.Name("Tus-Resumable")!: "1.0.0"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: "application/offset+octet-stream") }, to: URL(string: url)!,
                                     method: RequestMethod(rawValue: method), headers: all)
    }

    /// Creates a tus upload of `length` bytes and appends `first` to it; its URL.
    func begin(port: Int, length: Int, first: [UInt8]) async throws -> String {
        let created = try await tus("POST", "http://127.0.0.1:\(port)/files", headers: [HTTPField.Name("Upload-Length")!: String(length)])
        #expect(created.status == 201)
        let url = "http://127.0.0.1:\(port)" + (created.headers[.location] ?? "")
        let appended = try await tus("PATCH", url, body: first, headers: [HTTPField.Name("Upload-Offset")!: "0"])
        #expect(appended.status == 204)
        return url
    }

    func contents(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test("with a state directory, the storage directory holds nothing while an upload is in progress, and the stored file alone once it completes")
    func storageHoldsStoredFilesOnly() async throws {
        let storage = try SampleDirectory()
        let state = try SampleDirectory()
        let content = Array("state apart from files".utf8)
        let configuration = ReceiverConfiguration(directory: storage.path, stateDirectory: state.path)
        try await withUploadServer(directory: storage.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let url = try await begin(port: port, length: content.count, first: Array(content[..<5]))
            #expect(contents(storage.path) == [], "the storage directory holds \(contents(storage.path))")
            #expect(contents(state.path) == ["resumable", "tus"])
            let id = String(url.split(separator: "/").last!)
            #expect(contents(state.path + "/tus") == [id + ".data", id + ".json"])

            let rest = try await tus("PATCH", url, body: Array(content[5...]), headers: [HTTPField.Name("Upload-Offset")!: "5"])
            #expect(rest.status == 204)
            let stored = contents(storage.path)
            #expect(stored.count == 1, "the storage directory holds \(stored)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: storage.path + "/" + (stored.first ?? "none"))) == Data(content))
        }
    }

    @Test("uploads in progress in the hidden .tus/ move to a newly configured state directory at start, and complete there")
    func hiddenUploadsMoveToTheStateDirectory() async throws {
        let storage = try SampleDirectory()
        let state = try SampleDirectory()
        let content = Array("moved, then completed".utf8)
        let url = try await withUploadServer(directory: storage.path, resumableExpiry: .seconds(3600)) { port in
            (try await begin(port: port, length: content.count, first: Array(content[..<7])), port)
        }
        #expect(contents(storage.path + "/.tus").count == 2)

        let configuration = ReceiverConfiguration(directory: storage.path, stateDirectory: state.path)
        try await withUploadServer(directory: storage.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let moved = url.0.replacingOccurrences(of: ":\(url.1)/", with: ":\(port)/")
            #expect(contents(storage.path).filter { $0.hasPrefix(".tus") } == [], "the hidden directory is gone once emptied")
            let head = try await tus("HEAD", moved)
            #expect(head.headers[HTTPField.Name("Upload-Offset")!] == "7")
            let rest = try await tus("PATCH", moved, body: Array(content[7...]), headers: [HTTPField.Name("Upload-Offset")!: "7"])
            #expect(rest.status == 204)
            let stored = contents(storage.path).filter { !$0.hasPrefix(".") }
            #expect(stored.count == 1)
            #expect(try Data(contentsOf: URL(fileURLWithPath: storage.path + "/" + (stored.first ?? "none"))) == Data(content))
        }
    }

    #if os(Linux)
    @Test("a state directory on another file system than the storage directory is refused at start, naming it")
    func anotherFileSystemIsRefused() throws {
        let storage = try SampleDirectory()
        let tmpfs = try TmpfsMount(kibibytes: 1024)
        let configuration = ReceiverConfiguration(directory: storage.path, stateDirectory: tmpfs.path + "/state")
        #expect(throws: ReceiverSetupError.stateDirectoryOnAnotherFileSystem(tmpfs.path + "/state/tus")) {
            try TusReceiver(configuration: configuration, expiry: .seconds(60))
        }
        #expect(contents(tmpfs.path + "/state/tus") == [], "the refused start leaves no probe file behind")
        let same = ReceiverConfiguration(directory: tmpfs.path + "/files", stateDirectory: tmpfs.path + "/state")
        _ = try TusReceiver(configuration: same, expiry: .seconds(60))
        #expect(contents(tmpfs.path + "/files") == [], "the link tried at start leaves nothing")
        #expect(contents(tmpfs.path + "/state/tus") == [])
    }

    @Test("a state directory bind-mounted from the storage directory's own file system (one device, but no links across mounts) is refused at start")
    func bindMountIsRefused() throws {
        let storage = try SampleDirectory()
        let elsewhere = try SampleDirectory()
        let bind = try BindMount(of: elsewhere.path)
        var status = stat(), other = stat()
        #expect(stat(storage.path, &status) == 0 && stat(bind.path, &other) == 0 && status.st_dev == other.st_dev,
                "the bind mount shares the storage directory's device, which is what a comparison of devices would have let through")
        let configuration = ReceiverConfiguration(directory: storage.path, stateDirectory: bind.path + "/state")
        #expect(throws: ReceiverSetupError.stateDirectoryOnAnotherFileSystem(bind.path + "/state/tus")) {
            try TusReceiver(configuration: configuration, expiry: .seconds(60))
        }
        #expect(contents(bind.path + "/state/tus") == [], "the refused start leaves no probe file behind")
    }

    #endif

    @Test("a state directory put inside the hidden .tus/ of a receiver that kept uploads there: they move into it and resume, and nothing else moves")
    func stateDirectoryInsideTheHiddenOne() async throws {
        let storage = try SampleDirectory()
        let content = Array("kept, moved within, completed".utf8)
        let url = try await withUploadServer(directory: storage.path, resumableExpiry: .seconds(3600)) { port in
            (try await begin(port: port, length: content.count, first: Array(content[..<4])), port)
        }
        let configuration = ReceiverConfiguration(directory: storage.path, stateDirectory: storage.path + "/.tus")
        try await withUploadServer(directory: storage.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let id = String(url.0.split(separator: "/").last!)
            #expect(contents(storage.path + "/.tus") == ["resumable", "tus"])
            #expect(contents(storage.path + "/.tus/tus") == [id + ".data", id + ".json"])
            let moved = url.0.replacingOccurrences(of: ":\(url.1)/", with: ":\(port)/")
            let rest = try await tus("PATCH", moved, body: Array(content[4...]), headers: [HTTPField.Name("Upload-Offset")!: "4"])
            #expect(rest.status == 204)
            let stored = contents(storage.path).filter { !$0.hasPrefix(".") }
            #expect(stored.count == 1)
            #expect(try Data(contentsOf: URL(fileURLWithPath: storage.path + "/" + (stored.first ?? "none"))) == Data(content))
        }
    }
}
