import Foundation
import Testing

/// What receiving does, run against each HTTP server the receivers run on (``ReceiverAdapter``):
/// the same peers upload to Hummingbird's `formpost serve` and to the Vapor app on
/// FormPostVapor, and get the same answers.
@Suite("Receiving on Hummingbird and on Vapor alike")
struct AdapterReceivingTests {
    /// A sample file of `size` bytes in `samples`, and its SHA-256.
    static func sample(_ samples: SampleDirectory, _ name: String, size: Int, seed: UInt8) throws -> (path: String, sha256: String) {
        let path = try samples.file(name, size: size, seed: seed)
        return (path, sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    static func files(_ receipt: [String: Any]) throws -> [[String: Any]] {
        try #require(receipt["files"] as? [[String: Any]], "no files in \(receipt)")
    }

    /// `(status, headers, body)` of curl's answer to `arguments`.
    static func curl(_ arguments: [String]) async throws -> (status: Int, headers: [String: String], body: String) {
        var output = try await offPool { try Subprocess.run("curl", ["-s", "-i", "--max-time", "60"] + arguments) }
        // Interim answers (100 Continue, 104) come before the final one.
        while output.hasPrefix("HTTP/1.1 1"), let end = output.range(of: "\r\n\r\n") { output = String(output[end.upperBound...]) }
        let (head, body) = output.range(of: "\r\n\r\n").map { (String(output[..<$0.lowerBound]), String(output[$0.upperBound...])) } ?? (output, "")
        var lines = head.split(separator: "\r\n").map(String.init)
        let status = Int(lines.removeFirst().split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, body)
    }

    /// Runs `body` with a server of `adapter` storing into a directory of `samples`.
    static func withServer<T: Sendable>(_ adapter: ReceiverAdapter, _ samples: SampleDirectory,
                                        _ body: (ReceiverAdapter.Server) async throws -> T) async throws -> T {
        let server = try await adapter.start(directory: samples.path + "/stored-\(adapter)")
        defer { server.stop() }
        return try await body(server)
    }

    /// Runs `body` with the port of a proxy in front of `server` that cuts the first `cuts`
    /// connections carrying more than `cutAfter` bytes (Tests/Interop/cutting_proxy.py),
    /// logging each cut to `log`.
    static func throughCuttingProxy<T: Sendable>(to server: ReceiverAdapter.Server, cutAfter: Int, cuts: Int, log: String,
                                                 _ body: (Int) async throws -> T) async throws -> T {
        let proxyPort = try freePort()
        let proxy = try ChildProcess("python3", [Subprocess.interopScript("cutting_proxy.py"), String(proxyPort), String(server.port), String(cutAfter), String(cuts), log],
                                     stdout: .discard, stderr: .discard)
        defer { proxy.stop() }
        try await RawSocket.waitForListener(port: proxyPort, attempts: 200)
        return try await body(proxyPort)
    }

    @Test("curl -F and Python requests upload forms with fields and files of odd names: each receipt names them with their sizes and SHA-256, and each stored file has the bytes sent",
          arguments: ReceiverAdapter.allCases)
    func formsFromCurlAndRequests(adapter: ReceiverAdapter) async throws {
        let samples = try SampleDirectory()
        let first = try Self.sample(samples, "first.bin", size: 3_000_001, seed: 5)
        let second = try Self.sample(samples, "second.bin", size: 70_000, seed: 9)
        try await Self.withServer(adapter, samples) { server in
            let answer = try await Self.curl(["-F", "title=Holiday ü", "-F", "a=@\(first.path);filename=a \"quoted\" ü.bin",
                                              "-F", "b=@\(second.path);type=image/png", server.base + "/upload"])
            #expect(answer.status == 200, "\(answer.body)")
            let receipt = try Self.json(answer.body)
            #expect((receipt["fields"] as? [[String: String]]) == [["name": "title", "value": "Holiday ü"]])
            let files = try Self.files(receipt)
            #expect(files.map { $0["filename"] as? String } == ["a \"quoted\" ü.bin", "second.bin"])
            #expect(files.map { $0["sha256"] as? String } == [first.sha256, second.sha256])
            #expect(files.map { $0["size"] as? Int } == [3_000_001, 70_000])
            #expect(files.last?["contentType"] as? String == "image/png")
            for (file, source) in zip(files, [first, second]) {
                #expect(sha256Hex(try server.stored(try #require(file["storedAs"] as? String))) == source.sha256)
            }

            let text = try await offPool {
                try Subprocess.run("python3", [Subprocess.interopScript("upload_requests.py"), server.base + "/upload", "/dev/null", first.path])
            }
            let fromRequests = try Self.files(try Self.json(text))
            #expect(fromRequests.count == 1 && fromRequests.first?["sha256"] as? String == first.sha256 && fromRequests.first?["filename"] as? String == "photo.bin")
        }
    }

    @Test("tuspy (an independent tus client) through a proxy that cuts three of its requests: the upload completes, its receipt has the file's SHA-256, and HEAD answers its full length",
          arguments: ReceiverAdapter.allCases)
    func tuspyThroughCuts(adapter: ReceiverAdapter) async throws {
        let samples = try SampleDirectory()
        let file = try Self.sample(samples, "cut me.bin", size: 6 << 20, seed: 3)
        let log = samples.path + "/cuts.log"
        try await Self.withServer(adapter, samples) { server in
            let (url, proxyPort) = try await Self.throughCuttingProxy(to: server, cutAfter: 700_000, cuts: 3, log: log) { proxyPort in
                let url = try await offPool {
                    try Subprocess.run("python3", [Subprocess.interopScript("tus_upload.py"), "http://127.0.0.1:\(proxyPort)/files", file.path, String(2 << 20)])
                }
                return (url.trimmingCharacters(in: .whitespacesAndNewlines), proxyPort)
            }
            let direct = url.replacingOccurrences(of: ":\(proxyPort)/", with: ":\(server.port)/")
            #expect(direct.hasPrefix(server.base + "/files/"), "\(url)")
            let head = try await Self.curl(["-I", "-H", "Tus-Resumable: 1.0.0", direct])
            #expect(head.headers["upload-offset"] == String(6 << 20), "\(head)")
            let state = try Self.json(try await Self.curl(["-H", "Tus-Resumable: 1.0.0", direct]).body)
            let receipt = try #require(state["receipt"] as? [String: Any], "\(state)")
            #expect(try Self.files(receipt).first?["sha256"] as? String == file.sha256)
        }
        let cuts = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(cuts.count == 3, "the proxy cut \(cuts.count) requests")
    }

    @Test("formpost --resumable ietf (the IETF draft) through a proxy that cuts two of its requests: the upload completes with the file's SHA-256 (where no 104 comes, the client learns the upload's URL from the answers)",
          arguments: ReceiverAdapter.allCases)
    func draftThroughCuts(adapter: ReceiverAdapter) async throws {
        let samples = try SampleDirectory()
        let file = try Self.sample(samples, "draft.bin", size: 5 << 20, seed: 7)
        let log = samples.path + "/cuts.log"
        try await Self.withServer(adapter, samples) { server in
            let (finished, proxyPort) = try await Self.throughCuttingProxy(to: server, cutAfter: 900_000, cuts: 2, log: log) { proxyPort in
                // Retries spread over 10 s: on a loaded machine the request a cut left holding the
                // upload takes a while to end (on Vapor, its body ends only once the cut is read).
                let arguments = ["-s", "-S", "--json", "--resumable", "ietf", "--chunk-size", "2M", "--retry", "20", "--retry-delay", "0.5",
                                 "-T", file.path, "http://127.0.0.1:\(proxyPort)/upload"]
                let finished = try await offPool {
                    try ChildProcess("env", ["XDG_STATE_HOME=" + samples.path + "/state", formpostBinary] + arguments).finish()
                }
                return (finished, proxyPort)
            }
            #expect(finished.status == 0, "\(String(decoding: finished.stderr, as: UTF8.self))")
            let result = try Self.json(String(decoding: finished.stdout, as: UTF8.self))
            let url = try #require(result["upload_url"] as? String, "\(result)")
            let direct = url.replacingOccurrences(of: ":\(proxyPort)/", with: ":\(server.port)/")
            let answer = try await Self.curl([direct])
            #expect(try Self.files(try Self.json(answer.body)).first?["sha256"] as? String == file.sha256, "\(answer)")
        }
        let cuts = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(cuts.count == 2, "the proxy cut \(cuts.count) requests")
    }

    @Test("a malformed form of 20 MB is answered 400 before its body is read, and a client that sends all of its body before it reads (Python requests) still gets that answer: the server reads and drops the rest; the next form is taken",
          arguments: ReceiverAdapter.allCases)
    func earlyAnswerWhileTheClientSends(adapter: ReceiverAdapter) async throws {
        let samples = try SampleDirectory()
        let junk = try samples.file("junk.bin", size: 20 << 20, seed: 4)
        try await Self.withServer(adapter, samples) { server in
            let script = """
                import sys, requests
                with open(sys.argv[2], "rb") as body:
                    answer = requests.post(sys.argv[1], data=body, headers={"Content-Type": "multipart/form-data; boundary=B"}, timeout=30)
                print(answer.status_code, answer.text)
                """
            let started = ContinuousClock.now
            let answer = try await offPool { try Subprocess.run("python3", ["-c", script, server.base + "/upload", junk]) }
            #expect(answer.hasPrefix("400 "), "\(answer)")
            // Within the client's 30 s: a server that held the answer until the client gave up
            // would take them all. Draining 20 MB took 20–22 s in a debug build beside a busy core.
            #expect(ContinuousClock.now - started < .seconds(27), "the answer took \(ContinuousClock.now - started)")
            let next = try await Self.curl(["-F", "title=next", server.base + "/upload"])
            #expect(next.status == 200, "\(next)")
        }
    }

    @Test("the same requests get the same answers from both servers: a form's receipt (but the random stored names), a malformed form's 400, a form without a boundary's 400, tus OPTIONS, an unknown tus and draft upload's 404, the upload page and its HEAD")
    func sameAnswers() async throws {
        let samples = try SampleDirectory()
        let file = try Self.sample(samples, "same.bin", size: 100_000, seed: 2)
        var answers: [ReceiverAdapter: [String]] = [:]
        for adapter in ReceiverAdapter.allCases {
            answers[adapter] = try await Self.withServer(adapter, samples) { server in
                let requests: [[String]] = [
                    ["-F", "title=x", "-F", "f=@\(file.path)", server.base + "/upload"],
                    ["-H", "Content-Type: multipart/form-data; boundary=B", "--data-binary", "--B\r\nnot a header\r\n\r\nx\r\n--B--\r\n", server.base + "/upload"],
                    ["-H", "Content-Type: multipart/form-data", "--data-binary", "x", server.base + "/upload"],
                    ["-X", "OPTIONS", "-H", "Tus-Resumable: 1.0.0", server.base + "/files"],
                    ["-I", "-H", "Tus-Resumable: 1.0.0", server.base + "/files/00000000000000000000000000000000"],
                    ["-I", server.base + "/uploads/00000000000000000000000000000000"],
                    [server.base + adapter.pagePath],
                    ["-I", server.base + adapter.pagePath],
                ]
                var lines: [String] = []
                for request in requests {
                    let answer = try await Self.curl(request)
                    let kept = answer.headers.filter {
                        ["content-length", "content-type", "tus-resumable", "tus-version", "tus-extension", "tus-max-size", "upload-offset",
                         "content-security-policy", "x-content-type-options", "cache-control"].contains($0.key)
                    }
                    var body = answer.body
                    if var receipt = try? Self.json(body), var files = receipt["files"] as? [[String: Any]] {
                        for index in files.indices { files[index]["storedAs"] = nil }
                        receipt["files"] = files
                        body = String(decoding: try JSONSerialization.data(withJSONObject: receipt, options: [.sortedKeys]), as: UTF8.self)
                    }
                    lines.append("\(answer.status) \(kept.sorted { $0.key < $1.key }) \(body)")
                }
                return lines
            }
        }
        let hummingbird = try #require(answers[.hummingbird]), vapor = try #require(answers[.vapor])
        #expect(hummingbird.count == 8 && hummingbird.first?.hasPrefix("200 ") == true, "\(hummingbird)")
        #expect(hummingbird.suffix(2).allSatisfy { $0.hasPrefix("200 ") && $0.contains("text/html; charset=utf-8") }, "\(hummingbird.suffix(2))")
        for (mine, theirs) in zip(hummingbird, vapor) {
            #expect(mine == theirs)
        }
    }
}
