import Crypto
import Foundation
import FormPost
import FormPostServer
import Multipart
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `GET` on a tus upload answers.
struct TusState: Decodable {
    var length: Int64
    var offset: Int64
    var complete: Bool
    var receipt: Receipt?
}

/// `formpost serve`'s resumable uploads (tus 1.0 at `/files`), with tuspy as the
/// independent client and a proxy that cuts requests in the middle. The tests that take a
/// ``ReceiverAdapter`` run on Hummingbird's ``UploadServer`` and on a Vapor app alike.
@Suite("Resumable uploads received (tus)")
struct TusReceiverTests {
    let client = FormPostClient()
    static let tus: HTTPFields = [HTTPField.Name("Tus-Resumable")!: "1.0.0"]

    func request(_ method: String, _ url: String, body: [UInt8]? = nil, headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all = Self.tus
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: "application/offset+octet-stream") }, to: URL(string: url)!,
                                     method: RequestMethod(rawValue: method), headers: all)
    }

    func create(_ base: String, length: Int) async throws -> String {
        let created = try await request("POST", base + "/files", headers: [HTTPField.Name("Upload-Length")!: String(length), HTTPField.Name("Upload-Metadata")!: "filename " + Data("a \"b\".bin".utf8).base64EncodedString()])
        #expect(created.status == 201)
        return base + (created.headers[.location] ?? "")
    }

    func offset(_ url: String) async throws -> Int64? {
        try await request("HEAD", url).headers[HTTPField.Name("Upload-Offset")!].flatMap { Int64($0) }
    }

    func state(_ url: String) async throws -> TusState {
        try await request("GET", url).validate().decode(TusState.self)
    }

    @Test("tuspy uploads through a proxy that cuts three of its requests mid-body: it resumes from the offset, and the stored file is intact (without checksums, and with SHA-1 checksums, when nothing of a cut append counts)",
          arguments: [false, true])
    func independentClientThroughCuts(checksums: Bool) async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("cut me.bin", size: 6 << 20, seed: 9)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let log = directory.path + "/cuts.log"
        let stored = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let proxyPort = try freePort()
            let proxy = try ChildProcess("python3", [Subprocess.interopScript("cutting_proxy.py"), String(proxyPort), String(port), "700000", "3", log],
                                         stdout: .discard, stderr: .discard)
            defer { proxy.stop() }
            try await RawSocket.waitForListener(port: proxyPort, attempts: 200)
            let url = try await offPool {
                try Subprocess.run("python3", [Subprocess.interopScript("tus_upload.py"), "http://127.0.0.1:\(proxyPort)/files", file, String(2 << 20)]
                                   + (checksums ? ["checksum"] : []))
            }.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(url.hasPrefix("http://127.0.0.1:\(proxyPort)/files/"))
            let direct = url.replacingOccurrences(of: ":\(proxyPort)/", with: ":\(port)/")
            #expect(try await offset(direct) == 6 << 20, "HEAD on a complete upload answers its full length")
            return try await state(direct)
        }
        let cuts = (try String(contentsOfFile: log, encoding: .utf8)).split(separator: "\n")
        #expect(cuts.count == 3, "the proxy cut \(cuts.count) requests")
        #expect(stored.complete && stored.offset == 6 << 20)
        let receipt = try #require(stored.receipt?.files.first)
        #expect(receipt.filename == "cut me.bin" && receipt.sha256 == expected && receipt.size == 6 << 20)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + receipt.storedAs))) == expected)
    }

    @Test("a cut append keeps what reached the disk, a second append meanwhile answers 423, and the state survives a restart", arguments: ReceiverAdapter.allCases)
    func cutLockedRestarted(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        var random = SystemRandomNumberGenerator()
        let content = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let sent = 300 * 1024
        let url = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let url = try await create(base, length: content.count)
            let path = String(url.dropFirst(base.count))
            // An append that sends 300 KiB of its 1 MiB and stalls, then is cut.
            let head = "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: \(content.count)\r\n\r\n"
            let socket = try #require(try RawSocket.connect(port: port))
            let partial = Array(head.utf8) + content[0..<sent]
            _ = try await offPool { partial.withUnsafeBytes { POSIX.send(socket, $0) } }
            // While it runs, its bytes reach the disk, but HEAD acknowledges none of them: they
            // count once the append has ended, synced.
            try await offPool { waitUntilStored(in: uploads.path + "/.tus", moreThan: 0) }
            var seen = try await offset(url) ?? -1
            #expect(seen == 0, "while the stalled append holds 300 KiB, HEAD says \(seen)")
            let second = try await request("PATCH", url, body: Array(content[sent...]), headers: [HTTPField.Name("Upload-Offset")!: String(sent)])
            #expect(second.status == 423)
            // Cut: every byte that arrived is written, and counts.
            close(socket)
            for _ in 0..<100 where seen != Int64(sent) {
                try await Task.sleep(for: .milliseconds(50))
                seen = try await offset(url) ?? -1
            }
            #expect(seen == Int64(sent), "after the cut, HEAD says \(seen)")
            // An append at a wrong offset: 409 (423 until the cut append has let go of the upload).
            var wrong = try await request("PATCH", url, body: [1], headers: [HTTPField.Name("Upload-Offset")!: "0"])
            for _ in 0..<100 where wrong.status == 423 {
                try await Task.sleep(for: .milliseconds(50))
                wrong = try await request("PATCH", url, body: [1], headers: [HTTPField.Name("Upload-Offset")!: "0"])
            }
            #expect(wrong.status == 409)
            return url
        }
        // Another server on the same directory: what was acknowledged is still there.
        let done = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let moved = url.replacingOccurrences(of: #":\d+/"#, with: ":\(port)/", options: .regularExpression)
            #expect(try await offset(moved) == Int64(sent))
            let rest = try await request("PATCH", moved, body: Array(content[sent...]), headers: [HTTPField.Name("Upload-Offset")!: String(sent)])
            #expect(rest.status == 204 && rest.headers[HTTPField.Name("Upload-Offset")!] == String(content.count))
            return try await state(moved)
        }
        let file = try #require(done.receipt?.files.first)
        #expect(done.complete && file.sha256 == sha256Hex(content) && file.filename == "a \"b\".bin")
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs))) == sha256Hex(content))
    }

    @Test("checksums: an append whose Upload-Checksum does not match answers 460 and counts for nothing, nor does one cut short; a matching one (SHA-1, SHA-256) counts; an unknown algorithm is 400", arguments: ReceiverAdapter.allCases)
    func checksums(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        var random = SystemRandomNumberGenerator()
        let content = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let half = content.count / 2
        let first = Array(content[..<half]), second = Array(content[half...])
        let checksum = HTTPField.Name("Upload-Checksum")!, offsetField = HTTPField.Name("Upload-Offset")!
        @Sendable func sha1(_ bytes: [UInt8]) -> String { "sha1 " + Data(Insecure.SHA1.hash(data: bytes)).base64EncodedString() }
        @Sendable func sha256(_ bytes: [UInt8]) -> String { "sha256 " + Data(SHA256.hash(data: bytes)).base64EncodedString() }
        let done = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let url = try await create(base, length: content.count)
            let wrong = try await request("PATCH", url, body: first, headers: [offsetField: "0", checksum: sha256(second)])
            #expect(wrong.status == 460)
            #expect(try await offset(url) == 0, "nothing of a mismatching append counts")
            let unknown = try await request("PATCH", url, body: first, headers: [offsetField: "0", checksum: "md5 " + Data(repeating: 0, count: 16).base64EncodedString()])
            #expect(unknown.status == 400)
            let right = try await request("PATCH", url, body: first, headers: [offsetField: "0", checksum: sha1(first)])
            #expect(right.status == 204 && right.headers[offsetField] == String(half))
            // An append with a checksum, cut after 300 KiB: none of it counts.
            let path = String(url.dropFirst(base.count))
            let head = "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: \(half)\r\n"
                + "Upload-Checksum: \(sha256(second))\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: \(second.count)\r\n\r\n"
            try RawSocket.sendAndClose(port: port, bytes: Array(head.utf8) + second[..<(300 * 1024)])
            var rest = try await request("PATCH", url, body: second, headers: [offsetField: String(half), checksum: sha256(second)])
            for _ in 0..<100 where rest.status == 423 {
                try await Task.sleep(for: .milliseconds(50))
                rest = try await request("PATCH", url, body: second, headers: [offsetField: String(half), checksum: sha256(second)])
            }
            #expect(rest.status == 204 && rest.headers[offsetField] == String(content.count), "after the cut append, the offset was still \(half)")
            return try await state(url)
        }
        let file = try #require(done.receipt?.files.first)
        #expect(done.complete && file.sha256 == sha256Hex(content))
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs))) == sha256Hex(content))
    }

    @Test("a Content-Length that would overflow the offset answers 413, and the server goes on", arguments: ReceiverAdapter.allCases)
    func hugeContentLength(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let url = try await create(base, length: 10)
            #expect(try await request("PATCH", url, body: [1], headers: [HTTPField.Name("Upload-Offset")!: "0"]).status == 204)
            let head = "PATCH \(url.dropFirst(base.count)) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 1\r\n"
                + "Content-Type: application/offset+octet-stream\r\nContent-Length: 9223372036854775807\r\n\r\nbc"
            let status = try await offPool { try RawSocket.sendAndReadStatusLine(port: port, bytes: Array(head.utf8)) }
            #expect(status.hasPrefix("HTTP/1.1 413"), "answered \(status)")
            #expect(try await offset(url) == 1)
        }
    }

    @Test("past the uploads in progress allowed, creation answers 503 with Retry-After; an upload that ends makes room, so does one that expired", arguments: ReceiverAdapter.allCases)
    func uploadsInProgress(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        let configuration = ReceiverConfiguration(directory: uploads.path, maxUploadsInProgress: 1)
        try await withUploadServer(on: adapter, directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let first = try await create(base, length: 10)
            let refused = try await request("POST", base + "/files", headers: [HTTPField.Name("Upload-Length")!: "10"])
            #expect(refused.status == 503 && refused.headers[.retryAfter] == "60")
            #expect(try await request("DELETE", first).status == 204)
            _ = try await create(base, length: 10)
        }
        // Uploads kept for a second: the expired one makes room at once, although the
        // last sweep (at the first creation) ran less than 10 s before.
        let other = try SampleDirectory()
        let expiring = ReceiverConfiguration(directory: other.path, maxUploadsInProgress: 1)
        try await withUploadServer(on: adapter, directory: other.path, configuration: expiring, resumableExpiry: .seconds(1)) { port in
            let base = "http://127.0.0.1:\(port)"
            _ = try await create(base, length: 10)
            try await Task.sleep(for: .milliseconds(2100))
            let next = try await request("POST", base + "/files", headers: [HTTPField.Name("Upload-Length")!: "10"])
            #expect(next.status == 201, "the expired upload made room")
        }
    }

    @Test("DELETE of a complete upload ends its resumable state and keeps the stored file, as the draft's does", arguments: ReceiverAdapter.allCases)
    func deleteKeepsStoredFile(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let url = try await create("http://127.0.0.1:\(port)", length: 10)
            let appended = try await request("PATCH", url, body: Array("0123456789".utf8), headers: [HTTPField.Name("Upload-Offset")!: "0"])
            #expect(appended.status == 204)
            let stored = ((try? FileManager.default.contentsOfDirectory(atPath: uploads.path)) ?? []).filter { !$0.hasPrefix(".") }
            #expect(stored.count == 1)
            #expect(try await request("DELETE", url).status == 204)
            #expect(try await request("HEAD", url).status == 404)
            let after = ((try? FileManager.default.contentsOfDirectory(atPath: uploads.path)) ?? []).filter { !$0.hasPrefix(".") }
            #expect(after == stored, "DELETE removed the stored file")
            #expect(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + (stored.first ?? ""))) == Data("0123456789".utf8))
        }
    }

    @Test("the protocol's refusals: 412 without Tus-Resumable, 413 over the size limit, 415, 404, 410 once expired, and DELETE", arguments: ReceiverAdapter.allCases)
    func refusals(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let options = try await client.send(nil, to: URL(string: base + "/files")!, method: RequestMethod(rawValue: "OPTIONS"))
            #expect(options.status == 204 && options.headers[HTTPField.Name("Tus-Version")!] == "1.0.0")
            #expect(options.headers[HTTPField.Name("Tus-Extension")!] == "creation,creation-with-upload,creation-defer-length,termination,expiration,checksum,concatenation,concatenation-unfinished")
            #expect(options.headers[HTTPField.Name("Tus-Checksum-Algorithm")!] == "sha1,sha256")
            let bare = try await client.send(nil, to: URL(string: base + "/files")!, method: .post, headers: [HTTPField.Name("Upload-Length")!: "5"])
            #expect(bare.status == 412)
            let huge = try await request("POST", base + "/files", headers: [HTTPField.Name("Upload-Length")!: String(20 << 30)])
            #expect(huge.status == 413)
            #expect(try await request("HEAD", base + "/files/0123456789abcdef0123456789abcdef").status == 404)
            #expect(try await request("HEAD", base + "/files/..%2F..%2Fetc").status == 404)
            let url = try await create(base, length: 10)
            let text = try await client.send(.bytes([1], contentType: "text/plain"), to: URL(string: url)!, method: RequestMethod(rawValue: "PATCH"),
                                             headers: [HTTPField.Name("Tus-Resumable")!: "1.0.0", HTTPField.Name("Upload-Offset")!: "0"])
            #expect(text.status == 415)
            let tooLong = try await request("PATCH", url, body: Array(repeating: 7, count: 11), headers: [HTTPField.Name("Upload-Offset")!: "0"])
            #expect(tooLong.status == 413)
            #expect(try await request("DELETE", url).status == 204)
            #expect(try await request("HEAD", url).status == 404)
        }
        // With uploads kept for a second only:
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(1)) { port in
            let old = try await create("http://127.0.0.1:\(port)", length: 10)
            try await Task.sleep(for: .milliseconds(2100))
            #expect(try await request("HEAD", old).status == 410)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.tus").isEmpty)
    }
}

/// `formpost serve` as a process of its own, killed with SIGKILL mid-upload.
@Suite("Resumable uploads across a server killed mid-upload")
struct TusServerKilledTests {
    /// Starts `formpost serve` on `port` storing into `directory`; returns once it accepts.
    func serve(port: Int, directory: String) throws -> ChildProcess {
        let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", directory], stdout: .discard, stderr: .discard)
        try RawSocket.waitForListenerBlocking(port: port, attempts: 400)
        return server
    }

    @Test("a server killed with SIGKILL during an append loses nothing it acknowledged; restarted, it completes the upload the client resumes")
    func killedServer() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("data.bin", size: 24 << 20, seed: 3)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let port = try freePort()
        let state = ResumeStateStore(directory: directory.path + "/state")
        let endpoint = URL(string: "http://127.0.0.1:\(port)/files")!
        let acknowledged = UploadsSeen()
        let first = try await offPool { try TusServerKilledTests().serve(port: port, directory: uploads.path) }
        let uploader = TusUploader(chunkSize: 4 << 20, retry: .none, stateStore: state, options: UploadOptions(maxBytesPerSecond: 8 << 20))
        let cut = Task {
            try await uploader.upload(fileAt: file, to: endpoint) { progress in acknowledged.add(progress.acknowledged) }
        }
        // Kill the server once it has acknowledged 8 MiB, in the middle of the next append.
        for _ in 0..<400 where (acknowledged.values.last ?? 0) < 8 << 20 { try await Task.sleep(for: .milliseconds(25)) }
        try await Task.sleep(for: .milliseconds(200))
        kill(first.pid, SIGKILL)
        _ = try? await offPool { try first.finish() }
        await #expect(throws: (any Error).self) { _ = try await cut.value }
        let acknowledgedBefore = acknowledged.values.max() ?? 0
        #expect(acknowledgedBefore >= 8 << 20)

        let second = try await offPool { try TusServerKilledTests().serve(port: port, directory: uploads.path) }
        defer { second.stop() }
        let resumed = try await TusUploader(chunkSize: 4 << 20, retry: .none, stateStore: state).upload(fileAt: file, to: endpoint)
        #expect(resumed.resumedFrom >= acknowledgedBefore, "resumed from \(resumed.resumedFrom), after \(acknowledgedBefore) were acknowledged")
        #expect(resumed.resumedFrom + resumed.bytesSent == 24 << 20)
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 1)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + (stored.first ?? "")))) == expected)
        try await offPool { second.stop() }
    }
}
