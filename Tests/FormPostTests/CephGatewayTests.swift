import Foundation
@testable import FormPostReceiving
import FormPostS3
import Testing

/// `formpost serve --store s3://…` on Ceph's RADOS Gateway, a real S3 and not a mock: the
/// store as its users point it at one, with no flag but the endpoint.
@Suite("Object storage on Ceph RGW", .serialized)
struct CephGatewayTests {
    /// `formpost serve` on a free port storing into `gateway`'s bucket under `p/`, with the
    /// endpoint alone (no --s3-path-style: an IP address endpoint is addressed path-style
    /// by itself).
    static func serve(_ gateway: CephGateway, in directory: String) async throws -> (ChildProcess, Int) {
        let port = try freePort()
        let server = try ChildProcess("env", CephGateway.credentials + [formpostBinary, "serve", "--port", String(port), "--dir", directory,
                                                                     "--store", "s3://\(gateway.bucket)/p", "--s3-endpoint", gateway.endpoint],
                                      stdout: .discard, stderr: .capture)
        guard try await server.waitUntilListening(port: port, seconds: 60) else {
            let finished = try await offPool { try server.finish(timeout: 5) }
            throw Subprocess.Failure(description: "formpost serve on RGW did not start (\(finished.status)): \(String(decoding: finished.stderr, as: UTF8.self))")
        }
        return (server, port)
    }

    /// curl's status and head for `arguments`.
    static func curl(_ arguments: [String]) throws -> (status: Int, head: String) {
        let result = try ChildProcess("curl", ["-s", "-o", "/dev/null", "-D", "-", "-w", "%{http_code}"] + arguments).finish(timeout: 120)
        let text = String(decoding: result.stdout, as: UTF8.self)
        return (Int(text.suffix(3)) ?? 0, String(text.dropLast(3)))
    }

    /// The value of `name` in `head`.
    static func field(_ name: String, in head: String) -> String? {
        head.split(separator: "\r\n").last { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    /// The upload's offset by `HEAD` on `port`, once no receiver holds it (423 meanwhile).
    static func offset(_ location: String, port: Int) throws -> Int {
        for _ in 0..<240 {
            let answer = try curl(["-I", "-H", "Tus-Resumable: 1.0.0", "http://127.0.0.1:\(port)" + location])
            if answer.status == 200, let offset = field("Upload-Offset", in: answer.head).flatMap(Int.init) { return offset }
            guard answer.status == 423 else { throw Subprocess.Failure(description: "HEAD answered \(answer.status): \(answer.head)") }
            usleep(250_000)
        }
        throw Subprocess.Failure(description: "the upload stayed held")
    }

    @Test("a tus upload through two receivers on one bucket, an append cut mid-body on the first, the rest on the second: stored byte-exact, as boto3 reads it back; no flag but the endpoint",
          .timeLimit(.minutes(5)))
    func tusThroughTwoReceiversAndACut() async throws {
        let gateway = try await CephGateway()
        let sample = try SampleDirectory()
        let length = 20 << 20
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<length / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        let file = sample.path + "/upload.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let (first, firstPort) = try await Self.serve(gateway, in: sample.path + "/a")
        defer { first.stop() }
        let (second, secondPort) = try await Self.serve(gateway, in: sample.path + "/b")
        defer { second.stop() }

        let (cutAt, resumedAt, finalOffset, location) = try await offPool { () -> (Int, Int, Int, String) in
            let created = try Self.curl(["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: \(length)", "http://127.0.0.1:\(firstPort)/files"])
            guard created.status == 201, let location = Self.field("Location", in: created.head) else {
                throw Subprocess.Failure(description: "creation answered \(created.status): \(created.head)")
            }
            // 12 MiB of the whole sent to the first receiver, then the connection closed.
            let cutAt = 12 << 20
            guard let socket = try RawSocket.connect(port: firstPort) else { throw Subprocess.Failure(description: "connect failed") }
            let head = "PATCH \(location) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                + "Content-Type: application/offset+octet-stream\r\nContent-Length: \(length)\r\n\r\n"
            let sent = (Array(head.utf8) + bytes[0..<cutAt]).withUnsafeBytes { RawSocket.sendAll(socket, $0) }
            close(socket)
            guard sent else { throw Subprocess.Failure(description: "the cut append could not be sent") }
            // The second receiver goes on from what the first stored, as a client does: while
            // the first still ends the cut append it holds the upload (423), and an offset read
            // meanwhile may have moved since (409): ask again.
            let rest = sample.path + "/rest.bin"
            for _ in 0..<240 {
                let resumedAt = try Self.offset(location, port: secondPort)
                try Data(bytes[resumedAt...]).write(to: URL(fileURLWithPath: rest))
                let appended = try Self.curl(["-X", "PATCH", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Offset: \(resumedAt)",
                                              "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "@" + rest,
                                              "http://127.0.0.1:\(secondPort)" + location])
                if appended.status == 204 { return (cutAt, resumedAt, try Self.offset(location, port: firstPort), location) }
                guard appended.status == 423 || appended.status == 409 else {
                    throw Subprocess.Failure(description: "the append answered \(appended.status): \(appended.head)")
                }
                usleep(250_000)
            }
            throw Subprocess.Failure(description: "the second receiver never took the append")
        }
        #expect(resumedAt > 0 && resumedAt <= cutAt, "resumed at \(resumedAt) of \(cutAt) sent")
        #expect(finalOffset == length, "\(location): \(finalOffset)")
        let stored = try await gateway.contents().objects.filter { !$0.key.contains(".tus/") && !$0.key.contains(".formpost-probe") }
        #expect(stored.count == 1 && stored.first?.size == length, "\(stored.map { ($0.key, $0.size) })")
        #expect(stored.first?.sha256 == sha256Hex(bytes), "the stored object is not the file")
        try await offPool {
            first.stop()
            second.stop()
        }
    }

    @Test("tus concatenation on RGW: five partial uploads (one with parts and a tail, pieces under S3's 5 MiB part minimum) joined by a final upload (UploadPartCopy and parts sent, on a real S3); the stored object is the pieces in order, its SHA-256 in the receipt; no partial upload's bytes are left",
          .timeLimit(.minutes(5)))
    func concatenation() async throws {
        let gateway = try await CephGateway()
        let sample = try SampleDirectory()
        let (server, port) = try await Self.serve(gateway, in: sample.path + "/a")
        defer { server.stop() }
        let serve = TusCreationExtensionTests.Serve(base: "http://127.0.0.1:\(port)", samples: sample, bucket: { try await gateway.contents() })
        let pieces = try TusConcatenationTests.pieces(.objects)
        var partials: [String] = []
        for (index, piece) in pieces.enumerated() {
            partials.append(try await TusConcatenationTests.partial(serve, piece, name: "piece\(index)", sentAtCreation: min(piece.count, 300_000)))
        }
        let final = try await TusCreationExtensionTests.curl(TusCreationExtensionTests.tus + [
            "-X", "POST", "-H", "Upload-Concat: final;" + partials.joined(separator: " "), serve.base + "/files",
        ])
        let whole = pieces.reduce(Data(), +)
        #expect(final.status == 201 && final.headers["upload-offset"] == String(whole.count), "\(final.status) \(final.body)")
        let stored = try await TusCreationExtensionTests.storedFile(serve.base + (try #require(final.headers["location"])))
        let read = try await serve.storedSHA256(stored.storedAs)
        #expect(stored.sha256 == sha256Hex(whole) && read == sha256Hex(whole), "the stored object is not the pieces joined")
        #expect(try await serve.storedFiles() == [stored.storedAs])
        let left = try await serve.uploadBytesLeft()
        #expect(left.isEmpty, "\(left)")
        try await offPool { server.stop() }
    }

    /// Aborts every multipart upload in `gateway`'s bucket with boto3, as the bucket's
    /// `AbortIncompleteMultipartUpload` lifecycle rule would.
    static func abortMultipartUploads(_ gateway: CephGateway) async throws {
        let script = """
        import boto3, sys
        from botocore.config import Config
        s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
        for upload in s3.list_multipart_uploads(Bucket=sys.argv[2]).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=sys.argv[2], Key=upload["Key"], UploadId=upload["UploadId"])
        """
        _ = try await offPool { try Subprocess.runForBytes("env", CephGateway.credentials + ["python3", "-c", script, gateway.endpoint, gateway.bucket]) }
    }

    @Test("a tus upload whose multipart upload was aborted (as a lifecycle rule does) ends: the next append answers 410, HEAD 404, its state and tail removed; the file sent again as a new upload is stored (moto answers 500 where S3 says NoSuchUpload: RGW only)",
          .timeLimit(.minutes(5)))
    func abortedMultipartUpload() async throws {
        let gateway = try await CephGateway()
        let sample = try SampleDirectory()
        let (server, port) = try await Self.serve(gateway, in: sample.path + "/a")
        defer { server.stop() }
        let serve = TusCreationExtensionTests.Serve(base: "http://127.0.0.1:\(port)", samples: sample, bucket: { try await gateway.contents() })
        let tus = TusCreationExtensionTests.tus, data = TusCreationExtensionTests.data
        let bytes = try TusCreationExtensionTests.randomBytes(20 << 20)
        let created = try await TusCreationExtensionTests.curl(tus + ["-X", "POST", "-H", "Upload-Length: \(bytes.count)", serve.base + "/files"])
        let url = serve.base + (try #require(created.headers["location"]))
        let first = try TusCreationExtensionTests.random(sample, "first", bytes.prefix(10 << 20))
        let appended = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "@" + first, url])
        #expect(appended.status == 204 && appended.headers["upload-offset"] == String(10 << 20), "\(appended.status) \(appended.body)")
        #expect(try await gateway.contents().multipartUploads.count == 1)
        try await Self.abortMultipartUploads(gateway)

        let rest = try TusCreationExtensionTests.random(sample, "rest", bytes.dropFirst(10 << 20))
        let refused = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: \(10 << 20)", "--data-binary", "@" + rest, url])
        #expect(refused.status == 410, "\(refused.status) \(refused.body)")
        #expect(try await TusCreationExtensionTests.curl(tus + ["-I", url]).status == 404)
        let keys = try await gateway.contents().objects.map(\.key).filter { $0.contains("/.tus/") && !$0.hasSuffix(".lease") }
        #expect(keys.isEmpty, "the upload's state and tail are removed: \(keys)")

        let whole = try TusCreationExtensionTests.random(sample, "whole", bytes)
        let again = try await TusCreationExtensionTests.curl(tus + data + ["-H", "Upload-Length: \(bytes.count)", "--data-binary", "@" + whole, serve.base + "/files"])
        #expect(again.status == 201 && again.headers["upload-offset"] == String(bytes.count), "\(again.status) \(again.body)")
        let stored = try await TusCreationExtensionTests.storedFile(serve.base + (try #require(again.headers["location"])))
        #expect(stored.sha256 == sha256Hex(bytes))
        try await offPool { server.stop() }
    }

    @Test("the probe on RGW: If-Match compared with unquoted ETags, DELETE ignoring If-Match, multipart uploads dated, no checksums kept (parts sent without); a lease released by a holder that lost it (by a conditional write, then) leaves the new holder's",
          .timeLimit(.minutes(3)))
    func leaseRelease() async throws {
        let gateway = try await CephGateway()
        var storage = ObjectStorage(bucket: gateway.bucket, prefix: "fencing", endpoint: gateway.endpoint, accessKeyID: CephGateway.accessKey,
                                    secretAccessKey: CephGateway.secretKey)
        try await storage.checkConditionalWrites()
        #expect(storage.unquotedETagConditions && !storage.honoursDeleteConditions && storage.datesMultipartUploads && storage.listsMultipartUploadsByPrefix,
                "\(storage.conditionsReport)")
        await storage.checkChecksums()
        #expect(!storage.checksumsParts)
        try await ObjectLeaseFencingTests.staleReleaseLeavesTheNewHolders(storage)
        try await ObjectLeaseFencingTests.staleHolderIsFencedOff(storage)
    }

    @Test("the scenarios run on a directory and on moto, on RGW: a form, a draft upload in two requests, a tus upload removed by DELETE; tus's creation-with-upload and its refusals, creation-defer-length of several parts, concatenation (joined, refusals, unfinished, awaiting a slow partial upload)",
          .timeLimit(.minutes(12)))
    func handlerScenarios() async throws {
        try await ResumableHandlerScenarioTests.form(.ceph)
        try await ResumableHandlerScenarioTests.draftInTwoRequests(.ceph)
        try await ResumableHandlerScenarioTests.tusDeleted(.ceph)
        let creation = TusCreationExtensionTests(), concatenation = TusConcatenationTests()
        try await creation.creationWithUpload(storage: .ceph)
        try await creation.creationWithUploadRefusals(storage: .ceph)
        try await creation.deferredLength(storage: .ceph)
        try await concatenation.joined(storage: .ceph)
        try await concatenation.refusals(storage: .ceph)
        try await concatenation.unfinished(storage: .ceph)
        try await concatenation.awaitingIsNotIdle(storage: .ceph)
    }

    @Test("events in the bucket on RGW: a receiver killed with its disk leaves its event to the other, delivered once; ten forms and a tus upload across two receivers, each event taken once",
          .timeLimit(.minutes(5)))
    func eventsInTheBucket() async throws {
        let gateway = try await CephGateway()
        try await ObjectEventQueueTests.deliveredByTheOther(.ceph(gateway))
        try await ObjectEventQueueTests.eachEventOnce(.ceph(gateway))
    }

    @Test("a store that lists multipart uploads by whole key only, as MinIO does (a proxy in front of RGW): the probe says so, its uploads are listed undated (so that none is taken for stranded), and formpost serve names it at start",
          .timeLimit(.minutes(3)))
    func wholeKeyListing() async throws {
        let gateway = try await CephGateway()
        let proxyPort = try freePort()
        let proxy = try ChildProcess("python3", [Subprocess.interopScript("s3_minio_proxy.py"), String(proxyPort), String(gateway.port)])
        defer { proxy.stop() }
        try await RawSocket.waitForListener(port: proxyPort)
        var storage = ObjectStorage(bucket: gateway.bucket, prefix: "minio/", endpoint: "http://127.0.0.1:\(proxyPort)",
                                    accessKeyID: CephGateway.accessKey, secretAccessKey: CephGateway.secretKey)
        try await storage.checkConditionalWrites()
        #expect(!storage.listsMultipartUploadsByPrefix && storage.datesMultipartUploads, "\(storage.conditionsReport)")
        #expect(storage.conditionsReport.contains("listed by whole key only"), "\(storage.conditionsReport)")
        let uploadID = try await storage.beginMultipartUpload(of: "minio/stranded", attributes: ObjectAttributes())
        let listed = try await storage.listMultipartUploads(prefix: "minio/stranded").first { $0.uploadID == uploadID }
        #expect(listed != nil && listed?.initiated == nil,
                "the upload is not listed undated: a store that lists by whole key only would have it taken for stranded: \(String(describing: listed))")
        await storage.abortMultipartUpload(of: "minio/stranded", uploadID: uploadID, attempts: 2)

        let port = try freePort()
        let server = try ChildProcess("env", CephGateway.credentials + [formpostBinary, "serve", "--port", String(port), "--dir", try SampleDirectory().path,
                                                                     "--store", "s3://\(gateway.bucket)/minio", "--s3-endpoint", "http://127.0.0.1:\(proxyPort)"],
                                      stdout: .discard, stderr: .capture)
        defer { server.stop() }
        #expect(try await server.waitUntilListening(port: port, seconds: 60))
        let lines = try await offPool { () -> String in
            server.stop()
            return String(decoding: try server.finish(timeout: 10).stderr, as: UTF8.self)
        }
        #expect(lines.contains("multipart uploads listed by whole key only: left to the store's expiry of stale uploads"), "\(lines)")
    }

    @Test("on RGW, the sweep removes what dead receivers left (tails and leases no upload names, a multipart upload older than the maximum lifetime) and keeps a live upload's",
          .timeLimit(.minutes(3)))
    func strandedRemoved() async throws {
        let gateway = try await CephGateway()
        let storage = ObjectStorage(bucket: gateway.bucket, endpoint: gateway.endpoint, accessKeyID: CephGateway.accessKey, secretAccessKey: CephGateway.secretKey)
        try await ObjectUploadLifetimeTests.strandedRemoved(storage: storage, credentials: CephGateway.credentials, datesMultipartUploads: true) {
            try await gateway.contents()
        }
    }
}
