import Foundation
import FormPost
import FormPostServer
import Multipart
import Testing

@Suite("Receiver")
struct ReceiverTests {
    let client = FormPostClient()

    /// Posts `body` with `contentType` (or a form) and returns the status and JSON.
    func post(_ url: URL, body: [UInt8], contentType: String, method: RequestMethod = .post) async throws -> UploadResponse {
        try await client.send(.bytes(body, contentType: contentType), to: url, method: method)
    }

    /// The files in the receiver's directory, hidden partial files included.
    func storedFiles(_ server: TestServer) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: server.directory).sorted()
    }

    @Test("hostile filenames are kept in the receipt and never used as paths")
    func hostileFilenames() async throws {
        let names = ["../../etc/passwd", "/etc/shadow", "..\\..\\win.ini", "a\u{0}b.txt", ".", "..", String(repeating: "x", count: 5000) + ".txt", "ok.txt"]
        var form = MultipartForm()
        for (index, name) in names.enumerated() { form.append(name: "f\(index)", bytes: [UInt8(index)], filename: name) }
        let hostileForm = form
        let server = try TestServer()
        let receipt = try await server.run { base in
            try await client.upload(hostileForm, to: base.appendingPathComponent("upload")).validate().decode(Receipt.self)
        }
        #expect(receipt.files.map(\.filename) == names.map { $0.replacingOccurrences(of: "\u{0}", with: "%00") })
        let stored = try storedFiles(server)
        #expect(stored.count == names.count)
        #expect(stored.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
        #expect(Set(receipt.files.map(\.storedAs)) == Set(stored))
        let parent = try FileManager.default.contentsOfDirectory(atPath: (server.directory as NSString).deletingLastPathComponent)
        #expect(!parent.contains("passwd") && !parent.contains("win.ini"))
    }

    @Test("crossed limits answer 413 and leave nothing behind", arguments: [
        (ReceiverConfiguration(directory: "", maxFileSize: 1000), "maxFileSize"),
        (ReceiverConfiguration(directory: "", maxBodySize: 5000), "maxBodySize"),
        (ReceiverConfiguration(directory: "", maxParts: 2), "maxParts"),
        (ReceiverConfiguration(directory: "", maxFieldSize: 10), "maxFieldSize"),
    ])
    func limits(template: ReceiverConfiguration, limit: String) async throws {
        let directory = try SampleDirectory()
        var form = MultipartForm()
        form.append(name: "field", value: "a value longer than ten bytes")
        form.append(name: "small", bytes: [1, 2, 3], filename: "small.bin")
        try form.append(name: "big", fileAt: try directory.file("big.bin", size: 20_000))
        let limitedForm = form
        let server = try TestServer()
        var configuration = template
        configuration.directory = server.directory
        let finalConfiguration = configuration
        let response = try await server.run(configuration: finalConfiguration) { base in
            try await client.upload(limitedForm, to: base.appendingPathComponent("upload"), strategy: .streaming)
        }
        #expect(response.status == 413)
        #expect(response.text.contains(limit), "\(response.text)")
        #expect(try storedFiles(server).isEmpty)
    }

    @Test("wrong method 405, wrong content type 415, malformed body 400, as JSON")
    func refusals() async throws {
        let server = try TestServer()
        try await server.run { base in
            let url = base.appendingPathComponent("upload")
            let get = try await client.send(nil, to: url, method: .get)
            #expect(get.status == 405 && get.header("Allow") == "POST")
            let json = try await post(url, body: Array("{}".utf8), contentType: "application/json")
            #expect(json.status == 415)
            let truncated = try await post(url, body: Array("--B\r\nContent-Disposition: form-data; name=\"a\"; filename=\"a.txt\"\r\n\r\nno end".utf8), contentType: "multipart/form-data; boundary=B")
            #expect(truncated.status == 400)
            #expect(truncated.text.contains("closing delimiter"))
            let noBoundary = try await post(url, body: [], contentType: "multipart/form-data")
            #expect(noBoundary.status == 400)
            for response in [get, json, truncated, noBoundary] {
                #expect(response.header("Content-Type") == "application/json")
                #expect((try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])?["error"] != nil)
            }
        }
        #expect(try storedFiles(server).isEmpty)
    }

    @Test("a client that disconnects mid-file leaves no file")
    func disconnectMidFile() async throws {
        let server = try TestServer()
        try await server.run { base in
            let head = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 10000000\r\n\r\n"
            let body = "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n\r\n" + String(repeating: "x", count: 200_000)
            try RawSocket.sendAndClose(port: base.port!, bytes: Array((head + body).utf8))
            try await Task.sleep(nanoseconds: 500_000_000)
        }
        #expect(try storedFiles(server).isEmpty)
    }

    @Test("concurrent uploads are all stored with correct digests")
    func concurrency() async throws {
        let directory = try SampleDirectory()
        let paths = try (0..<16).map { try directory.file("c\($0).bin", size: 1_000_000 + $0, seed: UInt8($0)) }
        let server = try TestServer()
        let receipts = try await server.run { base in
            try await withThrowingTaskGroup(of: Receipt.self) { group in
                for path in paths {
                    group.addTask {
                        var form = MultipartForm()
                        try form.append(name: "file", fileAt: path)
                        return try await client.upload(form, to: base.appendingPathComponent("upload"), strategy: .streaming).validate().decode(Receipt.self)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(receipts.count == 16)
        for receipt in receipts {
            let file = try #require(receipt.files.first)
            let original = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + file.filename))
            #expect(file.sha256 == sha256Hex(original) && file.size == Int64(original.count))
        }
        #expect(try storedFiles(server).count == 16)
    }

    @Test("curl -F uploads round-trip through the receiver")
    func curlRoundTrip() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("photo.jpg", size: 3_000_000)
        let notePath = directory.path + "/note.txt"
        try Data("a note ✓".utf8).write(to: URL(fileURLWithPath: notePath))
        let server = try TestServer()
        let output = try await server.run { base in
            try await offPool { try Subprocess.run("curl", ["-sS", "-F", "title=from curl", "-F", "photo=@\(path)", "-F", "note=<\(notePath);type=text/plain", base.appendingPathComponent("upload").absoluteString]) }
        }
        let receipt = try JSONDecoder().decode(Receipt.self, from: Data(output.utf8))
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(receipt.fields == [.init(name: "title", value: "from curl"), .init(name: "note", value: "a note ✓")])
        #expect(receipt.files.first?.filename == "photo.jpg" && receipt.files.first?.contentType == "image/jpeg")
        #expect(receipt.files.first?.sha256 == sha256Hex(original))
    }

    @Test("a client that expects 100-continue (curl past 1 MiB) is told to go on before the body is read, not left to its own timeout")
    func continueExpected() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let path = try directory.file("photo.jpg", size: 3_000_000)
        // curl waits 1 s by default; a loaded machine can take longer than that to run
        // the handler, so the test gives it 30 s: a server that never sends 100 still
        // fails, after 30 s, with curl's "Done waiting".
        let run = try await withUploadServer(directory: uploads.path) { port in
            try await offPool { try ChildProcess("curl", ["-sv", "--http1.1", "--expect100-timeout", "30", "-F", "photo=@\(path)", "http://127.0.0.1:\(port)/upload"]).finish() }
        }
        let verbose = String(decoding: run.stderr, as: UTF8.self)
        #expect(verbose.contains("> Expect: 100-continue") && verbose.contains("< HTTP/1.1 100 Continue"), "\(verbose)")
        #expect(!verbose.contains("Done waiting for 100-continue"))
        #expect(try JSONDecoder().decode(Receipt.self, from: run.stdout).files.map(\.sha256) == [sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))])
    }
}
