import Foundation
import Testing

/// tus's creation-with-upload (the first bytes in the creating `POST`, as tus-js-client's
/// `uploadDataDuringCreation` sends them) and creation-defer-length (`Upload-Defer-Length: 1`,
/// the length declared by a later append), spoken by `curl` as the protocol's text
/// describes the requests, to `formpost serve` on a directory and on object storage (moto):
/// the stored file is the bytes sent, its SHA-256 in the receipt.
@Suite("tus creation-with-upload and creation-defer-length", .timeLimit(.minutes(5)))
struct TusCreationExtensionTests {
    /// Where `formpost serve` keeps uploads.
    enum Storage: String, CaseIterable, CustomTestStringConvertible {
        case directory, objects
        /// Ceph's RADOS Gateway, a real S3, started for the test: not among ``allCases``,
        /// run by `CephGatewayTests` alone (a cluster starting takes both cores for seconds).
        case ceph
        static var allCases: [Storage] { [.directory, .objects] }
        var testDescription: String { rawValue }
        /// Whether the uploads go to a bucket (moto or RGW).
        var inBucket: Bool { self != .directory }
    }

    /// A running `formpost serve` and what the tests read back from it: its directory
    /// `samples/stored`, or with `bucket` (boto3) the objects it stores.
    struct Serve: Sendable {
        let base: String
        let samples: SampleDirectory
        let bucket: (@Sendable () async throws -> MotoStore.Contents)?

        /// The stored file's bytes' SHA-256, read from the directory or with boto3.
        func storedSHA256(_ storedAs: String) async throws -> String? {
            guard let bucket else {
                return sha256Hex(try Data(contentsOf: URL(fileURLWithPath: samples.path + "/stored/" + storedAs)))
            }
            return try await bucket().objects.first { $0.key == storedAs }?.sha256
        }

        /// The stored files: in the directory, or the objects outside the uploads' state
        /// (and the start-up probe's), whose keys have no part beginning with `.`.
        func storedFiles() async throws -> [String] {
            guard let bucket else { return try FileManager.default.contentsOfDirectory(atPath: samples.path + "/stored").filter { !$0.hasPrefix(".") } }
            return try await bucket().objects.map(\.key).filter { key in !key.split(separator: "/").contains { $0.hasPrefix(".") } }
        }

        /// What holds uploads' bytes beside the stored files: data files of the uploads'
        /// state on the disk; in the bucket, objects of uploads (tails, partial uploads'
        /// objects) and multipart uploads in progress.
        func uploadBytesLeft() async throws -> [String] {
            guard let bucket else {
                return try FileManager.default.contentsOfDirectory(atPath: samples.path + "/stored/.tus").filter { $0.hasSuffix(".data") }
            }
            let contents = try await bucket()
            return contents.objects.map(\.key).filter { $0.hasSuffix(".partial") || $0.contains(".tail-") } + contents.multipartUploads
        }
    }

    static let tus = ["-H", "Tus-Resumable: 1.0.0"]
    static let data = ["-H", "Content-Type: application/offset+octet-stream"]

    /// Runs `body` with `formpost serve` storing on `storage`, with `options` besides.
    static func withServe<T: Sendable>(_ storage: Storage, options: [String] = [], _ body: (Serve) async throws -> T) async throws -> T {
        let samples = try SampleDirectory()
        var bucket: ObjectEventQueueTests.TestBucket?
        switch storage {
        case .directory: bucket = nil
        case .objects: bucket = .moto(try await MotoStore())
        case .ceph: bucket = .ceph(try await CephGateway())
        }
        let port = try freePort()
        // The endpoint alone: an IP address is addressed path-style.
        let storeOptions = bucket.map { ["--store", "s3://\($0.name)/tus", "--s3-endpoint", $0.endpoint] } ?? []
        let serve = (bucket?.credentials ?? []) + [formpostBinary, "serve", "--port", String(port), "--dir", samples.path + "/stored"] + storeOptions + options
        // The store lives until the server has stopped.
        defer { withExtendedLifetime(bucket) {} }
        let server = try ChildProcess("env", serve, stdout: .discard, stderr: .discard)
        defer { server.stop() }
        try await RawSocket.waitForListener(port: port, attempts: 1200)
        return try await body(Serve(base: "http://127.0.0.1:\(port)", samples: samples, bucket: bucket?.contents))
    }

    /// `bytes` in the file `name` of `samples`; its path.
    static func random(_ samples: SampleDirectory, _ name: String, _ bytes: Data) throws -> String {
        let path = samples.path + "/" + name
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `count` bytes from `/dev/urandom`.
    static func randomBytes(_ count: Int) throws -> Data {
        let urandom = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? urandom.close() }
        return try #require(try urandom.read(upToCount: count))
    }

    /// curl's answer to `arguments` (``AdapterReceivingTests/curl(_:)``).
    static func curl(_ arguments: [String]) async throws -> (status: Int, headers: [String: String], body: String) {
        try await AdapterReceivingTests.curl(arguments)
    }

    /// The receipt's one file once the upload at `url` is complete: its SHA-256 and key.
    static func storedFile(_ url: String) async throws -> (sha256: String, storedAs: String) {
        let state = try await curl(tus + [url])
        let json = try AdapterReceivingTests.json(state.body)
        #expect(json["complete"] as? Bool == true, "\(state.body)")
        let receipt = try #require(json["receipt"] as? [String: Any], "\(state.body)")
        let file = try #require(try AdapterReceivingTests.files(receipt).first)
        return (try #require(file["sha256"] as? String), try #require(file["storedAs"] as? String))
    }

    @Test("OPTIONS names creation-with-upload and creation-defer-length among the extensions")
    func extensionsAnnounced() async throws {
        try await Self.withServe(.directory) { serve in
            let options = try await Self.curl(["-X", "OPTIONS", serve.base + "/files"])
            let extensions = options.headers["tus-extension"]?.split(separator: ",").map(String.init) ?? []
            #expect(extensions.contains("creation-with-upload") && extensions.contains("creation-defer-length"), "\(options.headers)")
        }
    }

    @Test("creation-with-upload: a POST carrying the whole file answers 201 with Upload-Offset at its length, stored; one carrying its first bytes answers their offset, and a PATCH completes it",
          arguments: Storage.allCases)
    func creationWithUpload(storage: Storage) async throws {
        try await Self.withServe(storage) { serve in
            let bytes = try Self.randomBytes(1_300_000)
            let whole = try Self.random(serve.samples, "whole", bytes)
            let created = try await Self.curl(Self.tus + Self.data + ["-H", "Upload-Length: \(bytes.count)", "--data-binary", "@" + whole, serve.base + "/files"])
            #expect(created.status == 201 && created.headers["upload-offset"] == String(bytes.count), "\(created.status) \(created.headers) \(created.body)")
            let location = try #require(created.headers["location"])
            let stored = try await Self.storedFile(serve.base + location)
            #expect(stored.sha256 == sha256Hex(bytes))
            #expect(try await serve.storedSHA256(stored.storedAs) == sha256Hex(bytes), "the stored bytes are not those sent")

            let first = try Self.random(serve.samples, "first", bytes.prefix(500_000))
            let rest = try Self.random(serve.samples, "rest", bytes.dropFirst(500_000))
            let begun = try await Self.curl(Self.tus + Self.data + ["-H", "Upload-Length: \(bytes.count)", "--data-binary", "@" + first, serve.base + "/files"])
            #expect(begun.status == 201 && begun.headers["upload-offset"] == "500000", "\(begun.status) \(begun.headers) \(begun.body)")
            let url = serve.base + (try #require(begun.headers["location"]))
            let head = try await Self.curl(Self.tus + ["-I", url])
            #expect(head.headers["upload-offset"] == "500000" && head.headers["upload-length"] == String(bytes.count), "\(head.headers)")
            let appended = try await Self.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 500000", "--data-binary", "@" + rest, url])
            #expect(appended.status == 204 && appended.headers["upload-offset"] == String(bytes.count), "\(appended.status) \(appended.body)")
            let joined = try await Self.storedFile(url)
            #expect(joined.sha256 == sha256Hex(bytes))
            #expect(try await serve.storedSHA256(joined.storedAs) == sha256Hex(bytes))
        }
    }

    @Test("creation-with-upload: a POST whose Upload-Checksum does not hold answers 460 with the upload's Location, at offset 0; a body past Upload-Length answers 413 and creates nothing; a creation without data answers no offset",
          arguments: Storage.allCases)
    func creationWithUploadRefusals(storage: Storage) async throws {
        try await Self.withServe(storage) { serve in
            let bytes = try Self.randomBytes(200_000)
            let file = try Self.random(serve.samples, "file", bytes)
            let wrong = Data(count: 20).base64EncodedString()
            let refused = try await Self.curl(Self.tus + Self.data + ["-H", "Upload-Length: \(bytes.count)", "-H", "Upload-Checksum: sha1 \(wrong)",
                                                                    "--data-binary", "@" + file, serve.base + "/files"])
            #expect(refused.status == 460, "\(refused.status) \(refused.body)")
            let location = try #require(refused.headers["location"], "the 460 names no upload: \(refused.headers)")
            let head = try await Self.curl(Self.tus + ["-I", serve.base + location])
            #expect(head.status == 200 && head.headers["upload-offset"] == "0", "\(head.status) \(head.headers)")
            let resumed = try await Self.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "@" + file, serve.base + location])
            #expect(resumed.status == 204 && resumed.headers["upload-offset"] == String(bytes.count), "\(resumed.status) \(resumed.body)")
            #expect(try await Self.storedFile(serve.base + location).sha256 == sha256Hex(bytes))

            let tooLong = try await Self.curl(Self.tus + Self.data + ["-H", "Upload-Length: 1000", "--data-binary", "@" + file, serve.base + "/files"])
            #expect(tooLong.status == 413 && tooLong.headers["location"] == nil, "\(tooLong.status) \(tooLong.headers)")
            let empty = try await Self.curl(Self.tus + ["-X", "POST", "-H", "Upload-Length: 10", serve.base + "/files"])
            #expect(empty.status == 201 && empty.headers["upload-offset"] == nil, "\(empty.status) \(empty.headers)")
        }
    }

    @Test("creation-defer-length: an upload created with Upload-Defer-Length: 1 answers it on HEAD, takes appends, and completes once an append declares Upload-Length; an object upload of several parts too",
          arguments: Storage.allCases)
    func deferredLength(storage: Storage) async throws {
        try await Self.withServe(storage) { serve in
            // On object storage, more than two parts: the part size is chosen before the length is known.
            let size = storage.inBucket ? 18_000_000 : 1_300_000
            let split = size / 2 + 7
            let bytes = try Self.randomBytes(size)
            let first = try Self.random(serve.samples, "first", bytes.prefix(split))
            let rest = try Self.random(serve.samples, "rest", bytes.dropFirst(split))
            let created = try await Self.curl(Self.tus + ["-X", "POST", "-H", "Upload-Defer-Length: 1", serve.base + "/files"])
            #expect(created.status == 201, "\(created.status) \(created.body)")
            let url = serve.base + (try #require(created.headers["location"]))
            let head = try await Self.curl(Self.tus + ["-I", url])
            #expect(head.headers["upload-defer-length"] == "1" && head.headers["upload-length"] == nil && head.headers["upload-offset"] == "0", "\(head.headers)")
            let appended = try await Self.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "@" + first, url])
            #expect(appended.status == 204 && appended.headers["upload-offset"] == String(split), "\(appended.status) \(appended.body)")
            let below = try await Self.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(split)", "-H", "Upload-Length: 10", url])
            #expect(below.status == 400, "a length below the offset: \(below.status) \(below.body)")
            let stillDeferred = try await Self.curl(Self.tus + ["-I", url])
            #expect(stillDeferred.headers["upload-defer-length"] == "1" && stillDeferred.headers["upload-offset"] == String(split), "\(stillDeferred.headers)")
            let declared = try await Self.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(split)", "-H", "Upload-Length: \(size)",
                                                                     "--data-binary", "@" + rest, url])
            #expect(declared.status == 204 && declared.headers["upload-offset"] == String(size), "\(declared.status) \(declared.body)")
            let known = try await Self.curl(Self.tus + ["-I", url])
            #expect(known.headers["upload-length"] == String(size) && known.headers["upload-defer-length"] == nil, "\(known.headers)")
            let stored = try await Self.storedFile(url)
            #expect(stored.sha256 == sha256Hex(bytes))
            #expect(try await serve.storedSHA256(stored.storedAs) == sha256Hex(bytes))
        }
    }

    @Test("creation-defer-length: both Upload-Length and Upload-Defer-Length, a Defer-Length other than 1, or neither answer 400; a declared length past the largest upload 413")
    func deferredLengthRefusals() async throws {
        try await Self.withServe(.directory) { serve in
            for fields in [["Upload-Length: 5", "Upload-Defer-Length: 1"], ["Upload-Defer-Length: 2"], [], ["Upload-Length: +5"]] {
                let answer = try await Self.curl(Self.tus + ["-X", "POST"] + fields.flatMap { ["-H", $0] } + [serve.base + "/files"])
                #expect(answer.status == 400 && answer.headers["location"] == nil, "\(fields): \(answer.status) \(answer.body)")
            }
            let created = try await Self.curl(Self.tus + ["-X", "POST", "-H", "Upload-Defer-Length: 1", serve.base + "/files"])
            let url = serve.base + (try #require(created.headers["location"]))
            let huge = try await Self.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "-H", "Upload-Length: \(Int64.max)", url])
            #expect(huge.status == 413, "\(huge.status) \(huge.body)")
        }
    }
}
