import Foundation
import Multipart
import FormPostServer
import Testing

/// The built `formpost` binary, beside the tests: on Linux the test runner is the tests'
/// own executable; on macOS a runner of the toolchain's (xctest, swiftpm-testing-helper)
/// loads the tests' bundle, which lies beside the binary.
let formpostBinary: String = {
    #if os(macOS)
    let directory = Bundle(for: ChildProcess.self).bundleURL.deletingLastPathComponent()
    #else
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    #endif
    return directory.appendingPathComponent("formpost").path
}()

/// What a run of the command gave.
struct CommandResult {
    let status: Int32
    let stdout: Data
    let stderr: String
    var text: String { String(decoding: stdout, as: UTF8.self) }
}

/// Runs `formpost` with `arguments` (standard input from `input`).
func formpost(_ arguments: [String], input: Data = Data()) throws -> CommandResult {
    let finished = try ChildProcess(formpostBinary, arguments, input: input).finish()
    return CommandResult(status: finished.status, stdout: finished.stdout, stderr: String(decoding: finished.stderr, as: UTF8.self))
}

#if os(Linux)
/// Runs `formpost` with `arguments`, sampling its resident set every 20 ms; returns the
/// exit status, the largest resident set seen, in MiB, and that sample's `/proc` lines
/// (`VmRSS`, `RssAnon`, `RssFile`), to tell a failure's memory apart. Linux only: it reads `/proc`.
func formpostPeakRSS(_ arguments: [String]) throws -> (status: Int32, peakMiB: Int, detail: String) {
    let child = try ChildProcess(formpostBinary, arguments, stdout: .discard, stderr: .inherit)
    let deadline = Date().addingTimeInterval(ChildProcess.defaultTimeout)
    var peak = 0
    var detail = ""
    let image = URL(fileURLWithPath: formpostBinary).resolvingSymlinksInPath().path
    while child.isRunning && Date() < deadline {
        // Only once the child runs formpost's image (read before its status): posix_spawn's
        // vfork child wakes the test runner at exec a moment before it leaves the runner's
        // memory, and a sample then read the runner's own (480 MiB of it, twice in CI).
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.pid)/exe")) == image,
           let status = try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8) {
            let lines = status.split(separator: "\n")
            if let line = lines.first(where: { $0.hasPrefix("VmRSS:") }),
               let kib = Int(line.split(separator: " ").dropFirst().first ?? ""), kib / 1024 > peak {
                peak = kib / 1024
                detail = lines.filter { $0.hasPrefix("VmRSS:") || $0.hasPrefix("RssAnon:") || $0.hasPrefix("RssFile:") }
                    .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }.joined(separator: ", ")
            }
        }
        usleep(20_000)
    }
    return (try child.finish(timeout: 0).status, peak, detail)
}
#endif

/// A part as the independent parsers report it.
struct ParsedByPeer: Codable, Equatable {
    let name: String
    let filename: String?
    let content_type: String?
    let size: Int
    let sha256: String
}

@Suite("formpost command")
struct CommandLineTests {

    @Test("the binary is built beside the tests")
    func binaryExists() {
        #expect(FileManager.default.isExecutableFile(atPath: formpostBinary), "\(formpostBinary)")
    }

    @Test("encode output is parsed identically by Werkzeug, python-multipart and Node")
    func independentParsers() async throws {
        let directory = try SampleDirectory()
        let binary = try directory.file("random.bin", size: 200_000, seed: 7)
        let text = directory.path + "/notes.txt"
        try Data("line one\r\nline two\n".utf8).write(to: URL(fileURLWithPath: text))
        let output = directory.path + "/body"
        let result = try await offPool { try formpost(["encode", "-F", "plain=value", "-F", "emoji=ünï 😀", "-F", "quote\"d=x", "-F", "typed=a;type=text/x-custom",
                                                       "--form-string", "literal=@not-a-file", "-F", "notes=<\(text)",
                                                       "-F", "bin=@\(binary);type=image/png", "-F", "txt=@\(text);filename=ça va \"x\".txt", "-F", "stdin=@-",
                                                       "--boundary", "formpost-interop", "-o", output], input: Data("from stdin".utf8)) }
        #expect(result.status == 0, "\(result.stderr)")
        let contentType = "multipart/form-data; boundary=formpost-interop"
        #expect(result.text.hasPrefix("Content-Type: \(contentType)\nContent-Length: "))
        let length = Int(result.text.split(separator: "\n")[1].split(separator: " ")[1]) ?? -1
        #expect(length == (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int))

        func part(_ name: String, _ filename: String?, _ type: String?, _ bytes: some DataProtocol) -> ParsedByPeer {
            ParsedByPeer(name: name, filename: filename, content_type: type, size: bytes.count, sha256: sha256Hex(bytes))
        }
        let binaryBytes = try Data(contentsOf: URL(fileURLWithPath: binary))
        let textBytes = try Data(contentsOf: URL(fileURLWithPath: text))
        let fields = [part("plain", nil, nil, Data("value".utf8)), part("emoji", nil, nil, Data("ünï 😀".utf8)), part("quote\"d", nil, nil, Data("x".utf8)),
                      part("typed", nil, nil, Data("a".utf8)), part("literal", nil, nil, Data("@not-a-file".utf8)), part("notes", nil, nil, textBytes)]
        let files = [part("bin", "random.bin", "image/png", binaryBytes), part("txt", "ça va \"x\".txt", "text/plain", textBytes),
                     part("stdin", "-", nil, Data("from stdin".utf8))]

        func peer(_ program: String, _ arguments: [String]) async throws -> [ParsedByPeer] {
            let output = try await offPool { try Subprocess.run(program, arguments) }
            return try JSONDecoder().decode([ParsedByPeer].self, from: Data(output.utf8))
        }
        // Node follows the WHATWG parser: every part in order, escapes undone.
        let node = try await peer("node", [Subprocess.interopScript("parse_form.mjs"), output, contentType])
        // (The WHATWG parser gives a file part without Content-Type, as standard input is here, text/plain.)
        let nodeFiles = files.dropLast() + [part("stdin", "-", "text/plain", Data("from stdin".utf8))]
        #expect(node == fields.prefix(3) + [ParsedByPeer(name: "typed", filename: nil, content_type: nil, size: 1, sha256: sha256Hex(Data("a".utf8)))] + fields.suffix(2) + nodeFiles)
        // Werkzeug reports fields, then files; it undoes the escapes too.
        let werkzeug = try await peer("python3", [Subprocess.interopScript("parse_form.py"), "werkzeug", output, contentType])
        #expect(werkzeug == fields + files)
        // python-multipart reports raw header parameters: the browser escapes stay, types are kept.
        let raw = try await peer("python3", [Subprocess.interopScript("parse_form.py"), "python-multipart", output, contentType])
        #expect(raw.map(\.name) == ["plain", "emoji", "quote%22d", "typed", "literal", "notes", "bin", "txt", "stdin"])
        #expect(raw.map(\.filename) == [nil, nil, nil, nil, nil, nil, "random.bin", "ça va %22x%22.txt", "-"])
        #expect(raw[3].content_type == "text/x-custom")
        #expect(raw.map(\.sha256) == (fields + files).map(\.sha256))
    }

    @Test("encode to standard output puts the head on standard error")
    func encodeToStdout() throws {
        let result = try formpost(["encode", "-F", "a=1", "--boundary", "B", "-o", "-"])
        #expect(result.status == 0)
        #expect(result.text == "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n")
        #expect(result.stderr == "Content-Type: multipart/form-data; boundary=B\nContent-Length: 59\n")
    }

    @Test("an upload stores the form and prints the answer; --json summarises")
    func upload() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("photo.jpg", size: 2_000_000)
        let server = try TestServer()
        let (plain, summary, viaURLSession) = try await server.run { base in
            let url = base.appendingPathComponent("upload").absoluteString
            return (try await offPool { try formpost(["-F", "title=hi", "-F", "photo=@\(path)", url]) },
                    try await offPool { try formpost(["--json", "-s", "-F", "photo=@\(path)", url]) },
                    try await offPool { try formpost(["--transport", "urlsession", "-s", "-F", "photo=@\(path)", url]) })
        }
        #expect(viaURLSession.status == 0, "\(viaURLSession.stderr)")
        #expect(try JSONDecoder().decode(Receipt.self, from: viaURLSession.stdout).files.first?.size == 2_000_000)
        #expect(plain.status == 0, "\(plain.stderr)")
        let receipt = try JSONDecoder().decode(Receipt.self, from: plain.stdout)
        #expect(receipt.fields == [.init(name: "title", value: "hi")])
        #expect(receipt.files.first?.sha256 == sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path))))
        let json = try JSONSerialization.jsonObject(with: summary.stdout) as? [String: Any]
        #expect(json?["status"] as? Int == 200)
        #expect((json?["bytes_sent"] as? Int ?? 0) > 2_000_000)
        #expect(json?["response_bytes"] as? Int ?? 0 > 0)
        #expect((json?["response_headers"] as? [String: String])?["content-type"] == "application/json")
    }

    @Test("-T sends a raw PUT and --data-binary a raw POST")
    func rawBodies() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("raw.bin", size: 777_777)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        let server = try TestServer()
        let (put, post) = try await server.run { base in
            let url = base.appendingPathComponent("digest").absoluteString
            return (try await offPool { try formpost(["-s", "-T", path, url]) }, try await offPool { try formpost(["-s", "--data-binary", "@\(path)", url]) })
        }
        let putDigest = try JSONDecoder().decode(Digest.self, from: put.stdout)
        let postDigest = try JSONDecoder().decode(Digest.self, from: post.stdout)
        #expect(putDigest.method == "PUT" && putDigest.sha256 == expected)
        #expect(postDigest.method == "POST" && postDigest.sha256 == expected)
    }

    @Test("exit codes match curl's")
    func exitCodes() async throws {
        let missing = try await offPool { try formpost(["-F", "f=@/nonexistent/file.bin", "http://127.0.0.1:1/"]) }
        #expect(missing.status == 26, "a missing file is found before any connection (7 would mean it tried to send)")
        #expect(missing.stderr.contains("/nonexistent/file.bin"))
        let noName = try await offPool { try formpost(["-F", "a=@", "http://127.0.0.1:1/"]) }
        #expect(noName.status == 26 && noName.stderr == "formpost: -F a=@: no file name after @ (give a path, or - for standard input)\n", "\(noName.stderr)")
        let directory = try await offPool { try formpost(["-F", "f=@/tmp", "http://127.0.0.1:1/"]) }
        #expect(directory.status == 26)
        let refused = try await offPool { try formpost(["-sS", "-F", "a=1", "http://127.0.0.1:1/"]) }
        #expect(refused.status == 7, "\(refused.stderr)")
        #expect(refused.stderr == "formpost: Could not connect to 127.0.0.1 port 1: Connection refused.\n")
        let unknown = try await offPool { try formpost(["-sS", "-F", "a=1", "http://nonexistent.invalid/"]) }
        let quiet = try await offPool { try formpost(["-s", "-F", "a=1", "http://127.0.0.1:1/"]) }
        #expect(quiet.status == 7 && quiet.stderr.isEmpty, "-s without -S says nothing, as curl: \(quiet.stderr)")
        #expect(unknown.status == 6, "\(unknown.stderr)")
        #expect(unknown.stderr == "formpost: Could not resolve host nonexistent.invalid: no address was found for it.\n")
        let noValue = try await offPool { try formpost(["-F", "novalue", "http://127.0.0.1:1/"]) }
        #expect(noValue.status == 2)
        let noArguments = try await offPool { try formpost([]) }
        #expect(noArguments.status == 2)
        let badRate = try await offPool { try formpost(["--limit-rate", "fast", "-F", "a=1", "http://x/"]) }
        #expect(badRate.status == 2)
        let server = try TestServer()
        let (failed, shown) = try await server.run { base in
            let url = base.appendingPathComponent("upload").absoluteString
            return (try await offPool { try formpost(["-f", "-X", "PUT", "-F", "a=1", url]) }, try await offPool { try formpost(["-X", "PUT", "-F", "a=1", url]) })
        }
        #expect(failed.status == 22 && failed.stdout.isEmpty)
        #expect(shown.status == 0 && shown.text.contains("POST"))
    }

    #if os(Linux)
    /// Linux only, as ``formpostPeakRSS(_:)``.
    @Test("uploading to a slow server keeps the client's memory bounded, far below the body")
    func boundedMemoryAgainstSlowServer() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("large.bin", size: 120_000_000)
        let server = try TestServer()
        let (status, peakMiB, detail) = try await server.run { base in
            try await offPool { try formpostPeakRSS(["-s", "-o", "/dev/null", "-F", "big=@\(path)", base.appendingPathComponent("slow").absoluteString]) }
        }
        #expect(status == 0)
        print("bounded-memory: client peak \(peakMiB) MiB (\(detail))")
        #expect(peakMiB > 0 && peakMiB < 80, "the client peaked at \(peakMiB) MiB (\(detail)) while sending 120 MB to a slow reader")
    }
    #endif

    @Test("the progress bar draws under a terminal and ends with a summary",
          .enabled(if: Platform.isLinux, "runs util-linux's script (macOS's BSD script takes other options)"))
    func progressBarUnderTerminal() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("big.bin", size: 30_000_000)
        let server = try TestServer()
        let transcript = try await server.run { base in
            let command = "\(formpostBinary) -o /dev/null -F big=@\(path) \(base.appendingPathComponent("slow").absoluteString)"
            return try await offPool { try Subprocess.run("script", ["-qfec", command, "/dev/null"]) }
        }
        #expect(transcript.contains("%") && transcript.contains("MiB"))
        let lastLine = transcript.components(separatedBy: "\r").last { $0.contains("Sent") } ?? ""
        #expect(lastLine.contains("Sent 28.6 MiB") && lastLine.contains("HTTP 200"), "\(lastLine)")
        let silent = try await server.run { base in
            try await offPool { try Subprocess.run("script", ["-qfec", "\(formpostBinary) -s -o /dev/null -F big=@\(path) \(base.appendingPathComponent("digest").absoluteString)", "/dev/null"]) }
        }
        #expect(silent.isEmpty)
    }

    @Test("file parts go to the socket by sendfile on plaintext HTTP, every byte of them, and arrive intact",
          .enabled(if: Platform.isLinux, "traces system calls with strace"))
    func zeroCopyFileParts() async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("big.bin", size: 40_000_000, seed: 3)
        let trace = directory.path + "/trace"
        let server = try TestServer()
        let output = try await server.run { base in
            try await offPool {
                try Subprocess.run("strace", ["-f", "-e", "trace=sendfile", "-o", trace, formpostBinary, "-s", "-F", "note=x", "-F", "big=@\(path)",
                                              base.appendingPathComponent("upload").absoluteString])
            }
        }
        let sent = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("sendfile") }
            .compactMap { line in line.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
            .filter { $0 > 0 }.reduce(0, +)
        #expect(sent == 40_000_000)
        let receipt = try JSONDecoder().decode(Receipt.self, from: Data(output.utf8))
        #expect(receipt.files.first?.sha256 == sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path))))
    }
}
