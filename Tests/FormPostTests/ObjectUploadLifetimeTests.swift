import Foundation
import FormPostReceiving
import FormPostS3
import NIOCore
import Testing

/// How long a resumable upload in object storage lives: `--resumable-expiry` after its last
/// activity, and `--resumable-max-lifetime` after its creation at the latest, however active
/// — shorter than the bucket's lifecycle rule, which aborts a multipart upload that long
/// after it began whatever its activity. `Upload-Expires` tells when.
@Suite("Object storage: an upload's lifetime", .timeLimit(.minutes(3)))
struct ObjectUploadLifetimeTests {
    /// The seconds since 1970 of the HTTP date `value`.
    static func seconds(_ value: String?) throws -> Double {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return try #require(value.flatMap(formatter.date(from:)), "not an HTTP date: \(value ?? "none")").timeIntervalSince1970
    }

    @Test("with --resumable-max-lifetime 6, an upload appended to every second is answered 410 once 6 s have passed since its creation, and its state and bytes are gone; Upload-Expires said so from the start")
    func maxLifetime() async throws {
        try await TusCreationExtensionTests.withServe(.objects, options: ["--resumable-max-lifetime", "6"]) { serve in
            let tus = TusCreationExtensionTests.tus, data = TusCreationExtensionTests.data
            let began = Date().timeIntervalSince1970
            let created = try await TusCreationExtensionTests.curl(tus + ["-X", "POST", "-H", "Upload-Length: 1000", serve.base + "/files"])
            let url = serve.base + (try #require(created.headers["location"], "creation answered \(created.status)"))
            let expires = try Self.seconds(created.headers["upload-expires"])
            #expect(expires >= began + 4 && expires <= began + 8, "Upload-Expires \(expires - began) s after creation, not 6")
            var offset = 0
            var refused: (status: Int, at: Double)?
            while Date().timeIntervalSince1970 - began < 20 {
                let answer = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: \(offset)", "--data-binary", "0123456789", url])
                if answer.status != 204 {
                    refused = (answer.status, Date().timeIntervalSince1970 - began)
                    break
                }
                #expect(try Self.seconds(answer.headers["upload-expires"]) == expires, "an append moved Upload-Expires past the upload's lifetime")
                offset += 10
                try await Task.sleep(for: .seconds(1))
            }
            let (status, at) = try #require(refused, "the upload was still taking appends 20 s after its creation")
            #expect(status == 410 && at >= 5, "answered \(status) \(at) s after creation")
            #expect(try await TusCreationExtensionTests.curl(tus + ["-I", url]).status == 404)
            let left = try await serve.bucket!().objects.map(\.key).filter { $0.contains("/.tus/") && !$0.hasSuffix(".lease") }
            #expect(left.isEmpty, "left of the expired upload: \(left)")
        }
    }

    @Test("without a maximum in reach, Upload-Expires follows the upload's activity: an append moves it --resumable-expiry past itself")
    func expiresAfterActivity() async throws {
        try await TusCreationExtensionTests.withServe(.objects, options: ["--resumable-expiry", "600"]) { serve in
            let tus = TusCreationExtensionTests.tus, data = TusCreationExtensionTests.data
            let created = try await TusCreationExtensionTests.curl(tus + ["-X", "POST", "-H", "Upload-Length: 100", serve.base + "/files"])
            let url = serve.base + (try #require(created.headers["location"], "creation answered \(created.status)"))
            let first = try Self.seconds(created.headers["upload-expires"])
            try await Task.sleep(for: .milliseconds(2200))
            let appended = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "0123456789", url])
            #expect(appended.status == 204)
            let moved = try Self.seconds(appended.headers["upload-expires"])
            #expect(moved >= first + 2, "the append did not move Upload-Expires: \(first) → \(moved)")
            let head = try await TusCreationExtensionTests.curl(tus + ["-I", url])
            // The append's answer stamps its activity a moment after its save: within a second.
            let told = try Self.seconds(head.headers["upload-expires"])
            #expect(abs(told - moved) <= 1, "HEAD tells another Upload-Expires than the append: \(told - moved) s apart")
        }
    }

    @Test("the sweep removes what dead receivers left: tails and leases of uploads whose state is gone, a tail the state does not name; a live upload's state and tail stay; moto's multipart uploads, all dated 2010, are none of them aborted",
          .timeLimit(.minutes(2)))
    func strandedRemoved() async throws {
        let store = try await MotoStore()
        try await Self.strandedRemoved(storage: store.storage(prefix: ""), credentials: MotoStore.credentials, datesMultipartUploads: false) {
            try await store.contents()
        }
    }

    /// ``strandedRemoved()`` on the bucket of `storage` (whose prefix is empty), with
    /// `formpost serve` given `credentials`; `contents` reads the bucket back. A multipart
    /// upload begun by hand is aborted when the store dates multipart uploads
    /// (`datesMultipartUploads`), else it must stay.
    static func strandedRemoved(storage: ObjectStorage, credentials: [String], datesMultipartUploads: Bool,
                                contents read: @escaping @Sendable () async throws -> MotoStore.Contents) async throws {
        let sample = try SampleDirectory()
        let port = try freePort()
        let server = try ChildProcess("env", credentials + [formpostBinary, "serve", "--port", String(port), "--dir", sample.path + "/unused",
                                                            "--store", "s3://\(storage.bucket)/tus", "--s3-endpoint", storage.endpoint,
                                                            "--resumable-max-lifetime", "8", "--s3-sweep", "1", "--s3-lease", "1"],
                                      stdout: .discard, stderr: .discard)
        defer { server.stop() }
        try await RawSocket.waitForListener(port: port, attempts: 1200)
        let tus = TusCreationExtensionTests.tus, data = TusCreationExtensionTests.data
        let created = try await TusCreationExtensionTests.curl(tus + ["-X", "POST", "-H", "Upload-Length: 100", "http://127.0.0.1:\(port)/files"])
        let location = try #require(created.headers["location"], "creation answered \(created.status)")
        let url = "http://127.0.0.1:\(port)" + location
        let appended = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "0123456789", url])
        #expect(appended.status == 204)
        let live = try #require(location.split(separator: "/").last.map(String.init))
        let planted = ["tus/.tus/0123456789abcdef.tail-dead", "tus/.tus/0123456789abcdef.lease", "tus/.tus/\(live).tail-unnamed"]
        for key in planted { _ = try await storage.put(key, body: ByteBuffer(string: "left"), attributes: ObjectAttributes(), condition: .none, what: "planting \(key)", attempts: nil) }
        _ = try await storage.beginMultipartUpload(of: "tus/stranded", attributes: ObjectAttributes())
        var contents = try await read()
        for _ in 0..<60 {
            contents = try await read()
            if contents.multipartUploads.isEmpty || !datesMultipartUploads, !contents.objects.contains(where: { planted.contains($0.key) }) { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        if !datesMultipartUploads {
            // Past the age (8 s and two leases) at which a dated one would go, and a pass more.
            try await Task.sleep(for: .seconds(9))
            contents = try await read()
        }
        let keys = contents.objects.map(\.key)
        if datesMultipartUploads {
            #expect(contents.multipartUploads.isEmpty, "a multipart upload older than the maximum lifetime stayed: \(contents.multipartUploads)")
        } else {
            #expect(contents.multipartUploads == ["tus/stranded"], "a multipart upload the store does not date was aborted: \(contents.multipartUploads)")
        }
        #expect(!keys.contains { planted.contains($0) }, "left: \(keys.filter { planted.contains($0) })")
        #expect(keys.contains("tus/.tus/\(live).info") && keys.contains { $0.hasPrefix("tus/.tus/\(live).tail-") && !$0.hasSuffix("unnamed") },
                "the live upload's state or tail went: \(keys)")
        try await offPool { server.stop() }
    }
}
