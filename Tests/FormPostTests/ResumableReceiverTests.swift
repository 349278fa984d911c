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

/// What `rufh_client.py` (an independent client of the IETF draft) prints.
struct DraftClientRun: Decodable {
    var location: String
    var interim: [String: String]
    var offset: Int64
    var status: Int
    var complete: Bool?
    var answer: Receipt?
}

/// `formpost serve`'s resumable uploads of the IETF draft: an independent client in Python
/// that speaks as Apple's URLSession does (each interop version), the protocol's answers,
/// a request ended by a newer one, and a restart. The tests that take a ``ReceiverAdapter``
/// run on Hummingbird's ``UploadServer`` and on a Vapor app alike.
@Suite("Resumable uploads received (IETF draft)")
struct ResumableReceiverTests {
    let client = FormPostClient()

    static func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
    static let draft: HTTPFields = [field("Upload-Draft-Interop-Version"): "8"]

    func request(_ method: RequestMethod, _ url: String, body: [UInt8]? = nil, contentType: String = "application/partial-upload",
                 headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all = Self.draft
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: contentType) }, to: URL(string: url)!, method: method, headers: all)
    }

    @Test("a Python client uploads a form in one request as Apple's URLSession does, learns the upload from the 104, is cut, and resumes; the receipt is the form's",
          arguments: [3, 5, 6, 8, 9])
    func independentClient(version: Int) async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("clip.bin", size: 3 << 20, seed: UInt8(version))
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let run = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let output = try await offPool {
                try Subprocess.runForBytes("python3", [Subprocess.interopScript("rufh_client.py"), "http://127.0.0.1:\(port)/upload", file,
                                                       String(version), "1000000", "title=Holiday ✓", "note=a b"])
            }
            return try JSONDecoder().decode(DraftClientRun.self, from: output)
        }
        #expect(run.interim["upload-draft-interop-version"] == String(version), "the 104 answers in the client's version")
        #expect(run.location.hasPrefix("/uploads/") && run.interim["location"] == run.location)
        #expect(run.interim["upload-limit"]?.contains("max-size=") == true)
        // The client resets its connection 0.2 s after sending 1,000,000 bytes: what the server
        // had not read by then is dropped with the socket, so on a loaded machine HEAD may
        // rightly say 0 (a full run saw it). What reached the disk is kept: the tests of cut
        // appends wait for it to be there (ResumableReceiverTests' held append, the tus ones).
        #expect(run.offset >= 0 && run.offset <= 1_000_000, "after the cut, HEAD said \(run.offset)")
        #expect(run.status == 200 && run.complete == true)
        let receipt = try #require(run.answer)
        #expect(receipt.fields == [.init(name: "title", value: "Holiday ✓"), .init(name: "note", value: "a b")])
        let stored = try #require(receipt.files.first)
        #expect(receipt.files.count == 1 && stored.filename == "clip.bin" && stored.size == 3 << 20 && stored.sha256 == expected)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + stored.storedAs))) == expected)
    }

    @Test("the protocol's answers: 201 with Location, 415, 409 with the offset, 400 for inconsistent lengths, 204 appends, the target's answer with Upload-Complete: ?1 and again on an empty append, 400 after completion, DELETE, 404", arguments: ReceiverAdapter.allCases)
    func answers(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let options = try await request(.options, base + "/upload")
            #expect(options.status == 204 && options.headers[Self.field("Upload-Limit")]?.contains("max-size=10737418240") == true)
            let created = try await request(.put, base + "/upload", body: [], contentType: "text/plain",
                                            headers: [Self.field("Upload-Complete"): "?0", Self.field("Upload-Length"): "10",
                                                      .contentDisposition: "inline; filename=\"notes.txt\""])
            #expect(created.status == 201 && created.headers[Self.field("Upload-Complete")] == "?0" && created.headers[Self.field("Upload-Offset")] == "0")
            let url = base + (created.headers[.location] ?? "")
            let offset = Self.field("Upload-Offset"), complete = Self.field("Upload-Complete")
            #expect(try await request(.patch, url, body: Array("0123".utf8), contentType: "application/offset+octet-stream",
                                      headers: [offset: "0", complete: "?0"]).status == 415)
            let conflict = try await request(.patch, url, body: Array("0123".utf8), headers: [offset: "5", complete: "?0"])
            #expect(conflict.status == 409 && conflict.headers[offset] == "0" && conflict.headers[complete] == "?0")
            #expect(conflict.text.contains("mismatching-upload-offset") && conflict.headers[.contentType] == "application/problem+json")
            let inconsistent = try await request(.patch, url, body: Array("0123".utf8), headers: [offset: "0", complete: "?0", Self.field("Upload-Length"): "11"])
            #expect(inconsistent.status == 400 && inconsistent.text.contains("inconsistent-upload-length"))
            let first = try await request(.patch, url, body: Array("0123".utf8), headers: [offset: "0", complete: "?0"])
            #expect(first.status == 204 && first.headers[offset] == "4" && first.headers[complete] == "?0")
            let head = try await request(.head, url)
            #expect(head.status == 204 && head.headers[offset] == "4" && head.headers[Self.field("Upload-Length")] == "10" && head.headers[complete] == "?0")
            #expect(head.headers[.cacheControl] == "no-store")
            // Content-Length and Upload-Complete: ?1 say 4 + 7 = 11, not 10.
            #expect(try await request(.patch, url, body: Array("456789!".utf8), headers: [offset: "4", complete: "?1"]).status == 400)
            let last = try await request(.patch, url, body: Array("456789".utf8), headers: [offset: "4", complete: "?1"])
            #expect(last.status == 200 && last.headers[complete] == "?1")
            let receipt = try last.decode(Receipt.self)
            let file = try #require(receipt.files.first)
            #expect(file.filename == "notes.txt" && file.contentType == "text/plain" && file.sha256 == sha256Hex(Array("0123456789".utf8)))
            #expect(try String(contentsOfFile: uploads.path + "/" + file.storedAs, encoding: .utf8) == "0123456789")
            let again = try await request(.patch, url, body: [], headers: [offset: "10", complete: "?1"])
            #expect(again.status == 200 && again.body == last.body, "the final answer is given again")
            #expect(try await request(.get, url).body == last.body)
            #expect(try await request(.patch, url, body: [1], headers: [offset: "10", complete: "?1"]).status == 400)
            let done = try await request(.head, url)
            #expect(done.headers[complete] == "?1" && done.headers[offset] == "10")
            #expect(try await request(.delete, url).status == 204)
            #expect(try await request(.head, url).status == 404)
            #expect(try await request(.head, base + "/uploads/0123456789abcdef0123456789abcdef").status == 404)
            #expect(try await request(.head, base + "/uploads/..%2F..%2Fetc").status == 404)
            // Without Upload-Complete, a request goes to the multipart receiver as ever.
            #expect(try await request(.post, base + "/upload", body: [1], contentType: "text/plain").status == 415)
            // Uploads created without Upload-Draft-Interop-Version (a client of the RFC) speak Upload-Complete too.
            let plain = try await client.send(.bytes(Array("hi".utf8), contentType: "text/plain"), to: URL(string: base + "/upload")!, method: .post,
                                              headers: [complete: "?1"])
            #expect(plain.status == 200 && plain.headers[complete] == "?1")
        }
    }

    @Test("hostile numbers: a Content-Length that overflows the offset, a length below the offset, and an offset past a complete upload's are refused, and the server goes on", arguments: ReceiverAdapter.allCases)
    func hostileNumbers(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let offset = Self.field("Upload-Offset"), complete = Self.field("Upload-Complete")
            let created = try await request(.post, base + "/upload", body: Array("a".utf8), contentType: "text/plain", headers: [complete: "?0"])
            let path = try #require(created.headers[.location])
            #expect(created.headers[offset] == "1")
            let huge = "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: 8\r\nUpload-Offset: 1\r\nUpload-Complete: ?1\r\n"
                + "Content-Type: application/partial-upload\r\nContent-Length: 9223372036854775807\r\n\r\nbc"
            let status = try await offPool { try RawSocket.sendAndReadStatusLine(port: port, bytes: Array(huge.utf8)) }
            #expect(status.hasPrefix("HTTP/1.1 400"), "answered \(status)")
            let below = try await request(.patch, base + path, body: [], headers: [offset: "1", complete: "?0", Self.field("Upload-Length"): "0"])
            #expect(below.status == 400 && below.text.contains("inconsistent-upload-length"))
            let done = try await request(.patch, base + path, body: Array("bc".utf8), headers: [offset: "1", complete: "?1"])
            #expect(done.status == 200 && done.headers[complete] == "?1")
            let past = try await request(.patch, base + path, body: [], headers: [offset: "7", complete: "?1"])
            #expect(past.status == 409 && past.headers[offset] == "3" && past.headers[complete] == "?0")
            let more = try await request(.patch, base + path, body: [1], headers: [offset: "3", complete: "?1"])
            #expect(more.status == 400 && more.headers[complete] == "?0", "an append to a complete upload is no answer of the target")
            #expect(try await request(.head, base + path).headers[offset] == "3", "the server still answers")
        }
    }

    @Test("limits: 413 with Upload-Limit for an upload larger than the server takes, and for content past the upload's length (which removes it); 503 past the uploads in progress; uploads expire, and an expired one makes room at once", arguments: ReceiverAdapter.allCases)
    func limitsAndExpiry(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        let complete = Self.field("Upload-Complete"), length = Self.field("Upload-Length")
        let configuration = ReceiverConfiguration(directory: uploads.path, maxBodySize: 1 << 20, maxFileSize: 1 << 19, maxUploadsInProgress: 2)
        try await withUploadServer(on: adapter, directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let form = try await request(.post, base + "/upload", body: [], contentType: "multipart/form-data; boundary=x",
                                         headers: [complete: "?0", length: String(2 << 20)])
            #expect(form.status == 413 && form.headers[Self.field("Upload-Limit")]?.contains("max-size=1048576") == true)
            let file = try await request(.post, base + "/upload", body: [], contentType: "video/mp4", headers: [complete: "?0", length: String(1 << 20)])
            #expect(file.status == 413 && file.headers[Self.field("Upload-Limit")]?.contains("max-size=524288") == true, "a file's limit is --max-file-size")
            let created = try await request(.post, base + "/upload", body: [], contentType: "text/plain", headers: [complete: "?0", length: "4"])
            let url = base + (created.headers[.location] ?? "")
            let past = try await request(.patch, url, body: Array("too long".utf8), headers: [Self.field("Upload-Offset"): "0", complete: "?0"])
            #expect(past.status == 413)
            #expect(try await request(.head, url).status == 404, "an upload whose content went past its length is removed")
            for _ in 0..<2 {
                #expect(try await request(.post, base + "/upload", body: [], contentType: "text/plain", headers: [complete: "?0", length: "4"]).status == 201)
            }
            let third = try await request(.post, base + "/upload", body: [], contentType: "text/plain", headers: [complete: "?0", length: "4"])
            #expect(third.status == 503 && third.headers[.retryAfter] == "60", "two uploads in progress at most")
        }
        // With one upload in progress at most and a second's lifetime: once it has expired,
        // the next creation is taken, although the last sweep ran less than 10 s before.
        let other = try SampleDirectory()
        let expiring = ReceiverConfiguration(directory: other.path, maxUploadsInProgress: 1)
        try await withUploadServer(on: adapter, directory: other.path, configuration: expiring, resumableExpiry: .seconds(1)) { port in
            let base = "http://127.0.0.1:\(port)"
            let first = try await request(.post, base + "/upload", body: [], contentType: "text/plain", headers: [complete: "?0", length: "4"])
            #expect(first.status == 201)
            try await Task.sleep(for: .milliseconds(2100))
            let next = try await request(.post, base + "/upload", body: [], contentType: "text/plain", headers: [complete: "?0", length: "4"])
            #expect(next.status == 201, "the expired upload made room")
            #expect([404, 410].contains(try await request(.head, base + (first.headers[.location] ?? "")).status))
        }
    }

    @Test("an append still held by a connection the server has not seen die is ended by the next request, which answers what reached the disk; the state survives a restart", arguments: ReceiverAdapter.allCases)
    func heldAppendEndedAndRestart(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        var random = SystemRandomNumberGenerator()
        let content = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let sent = 300 * 1024
        let offset = Self.field("Upload-Offset"), complete = Self.field("Upload-Complete")
        let (url, kept, heldEnded) = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let created = try await request(.post, base + "/upload", body: [], contentType: "application/octet-stream",
                                            headers: [complete: "?0", Self.field("Upload-Length"): String(content.count)])
            let path = try #require(created.headers[.location])
            // An append that sends 300 KiB of its 1 MiB and then neither sends nor closes.
            let head = "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: 8\r\nUpload-Offset: 0\r\nUpload-Complete: ?0\r\n"
                + "Content-Type: application/partial-upload\r\nContent-Length: \(content.count)\r\n\r\n"
            let socket = try #require(try RawSocket.connect(port: port))
            defer { close(socket) }
            let partial = Array(head.utf8) + content[0..<sent]
            _ = try await offPool { partial.withUnsafeBytes { POSIX.send(socket, $0) } }
            // Until a part of the 300 KiB is on the disk (the receiver writes in batches: what
            // it holds of a batch is written when the append ends), then HEAD ends the held
            // append and answers what reached the disk.
            try await offPool { waitUntilStored(in: uploads.path + "/.resumable", moreThan: Int64(sent / 2)) }
            let state = try await request(.head, base + path)
            let answered = Int(state.headers[offset] ?? "") ?? -1
            #expect(state.status == 204 && answered > sent / 2 && answered <= sent, "HEAD ends the held append and answers \(state.headers[offset] ?? "nothing")")
            let data = try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.resumable").filter { $0.hasSuffix(".data") }
            let onDisk = try data.map { try FileManager.default.attributesOfItem(atPath: uploads.path + "/.resumable/" + $0)[.size] as? Int }
            #expect(onDisk == [answered], "HEAD answered \(answered), the disk holds \(onDisk)")
            // The held request ended: on Hummingbird its connection was closed by the server;
            // Vapor gives a handler no connection to close, and the held request answers.
            let (closed, heldAnswer) = try await offPool { () -> (Bool, String) in
                var buffer = [UInt8](repeating: 0, count: 1024)
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var received = 1, answer: [UInt8] = []
                let headEnd: [UInt8] = [13, 10, 13, 10]
                while received > 0, !(adapter == .vapor && answer.firstRange(of: headEnd) != nil) {
                    received = recv(socket, &buffer, buffer.count, 0)
                    answer += buffer.prefix(max(received, 0))
                }
                return (received == 0 || errno == ECONNRESET, String(decoding: answer, as: UTF8.self))
            }
            // Never a success: the append's body ended short of its Content-Length.
            return (base + path, answered, adapter == .vapor ? heldAnswer.hasPrefix("HTTP/1.1 4") : closed)
        }
        #expect(heldEnded, "the held request neither closed (Hummingbird) nor was refused (Vapor)")
        let receipt = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let moved = url.replacingOccurrences(of: #":\d+/"#, with: ":\(port)/", options: .regularExpression)
            #expect(try await request(.head, moved).headers[offset] == String(kept))
            let rest = try await request(.patch, moved, body: Array(content[kept...]), headers: [offset: String(kept), complete: "?1"])
            #expect(rest.status == 200)
            return try rest.decode(Receipt.self)
        }
        let file = try #require(receipt.files.first)
        #expect(file.sha256 == sha256Hex(content) && file.size == Int64(content.count))
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs))) == sha256Hex(content))
    }

    @Test("over HTTPS with HTTP/2, curl sees the 104 naming the upload, and formpost --resumable ietf uploads a form whose receipt matches")
    func http2() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let path = try directory.file("clip.bin", size: 3 << 20, seed: 7)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        let tls = try UploadServer.serverTLSConfiguration(certificateChainPath: fixtures.certificatePath, privateKeyPath: fixtures.keyPath)
        let (verbose, ours) = try await withUploadServer(directory: uploads.path, tlsConfiguration: tls, resumableExpiry: .seconds(3600)) { port in
            let url = "https://localhost:\(port)/upload"
            let verbose = try await offPool {
                try ChildProcess("curl", ["-sv", "--http2", "--cacert", fixtures.caPath, "-H", "Upload-Draft-Interop-Version: 8", "-H", "Upload-Complete: ?1",
                                          "-H", "Content-Type: text/plain", "--data-binary", "hello", url]).finish()
            }
            let ours = try await offPool {
                try ChildProcess("env", ["XDG_STATE_HOME=" + directory.path + "/state", formpostBinary, "-s", "--http2", "--cacert", fixtures.caPath,
                                         "--resumable", "ietf", "--chunk-size", "1M", "-F", "title=hi", "-F", "clip=@" + path, url]).finish()
            }
            return (String(decoding: verbose.stderr, as: UTF8.self), ours)
        }
        #expect(verbose.contains("< HTTP/2 104") && verbose.contains("< location: /uploads/"), "\(verbose)")
        #expect(ours.status == 0, "\(String(decoding: ours.stderr, as: UTF8.self))")
        let receipt = try JSONDecoder().decode(Receipt.self, from: ours.stdout)
        #expect(receipt.fields == [.init(name: "title", value: "hi")] && receipt.files.map(\.sha256) == [expected])
    }

    @Test("formpost --resumable ietf -F note=<- reads standard input once, into the form it uploads", arguments: ReceiverAdapter.allCases)
    func formFromStandardInput(adapter: ReceiverAdapter) async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let run = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            try await offPool {
                try ChildProcess("env", ["XDG_STATE_HOME=" + directory.path + "/state", formpostBinary, "-s", "--resumable", "ietf",
                                         "-F", "note=<-", "-F", "title=hi", "http://127.0.0.1:\(port)/upload"], input: Data("from standard input".utf8)).finish()
            }
        }
        #expect(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        let receipt = try JSONDecoder().decode(Receipt.self, from: run.stdout)
        #expect(receipt.fields == [.init(name: "note", value: "from standard input"), .init(name: "title", value: "hi")])
    }
}
