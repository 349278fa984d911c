import Foundation
import Testing
import Multipart

extension TusClientTests {
    /// The arguments of `formpost --resumable MODE` uploading `file` to formpost serve on `port`:
    /// tus with `-T` to its creation endpoint, the IETF draft with `-F` to its form target.
    static func resumableArguments(_ mode: String, file: String, port: Int) -> [String] {
        mode == "tus" ? ["--resumable", "tus", "-T", file, "http://127.0.0.1:\(port)/files"]
                      : ["--resumable", "ietf", "-F", "big=@" + file, "http://127.0.0.1:\(port)/upload"]
    }

    @Test("formpost --resumable through a proxy that cuts its upload once resumes without --retry: exit 0, the stored file intact",
          arguments: ["tus", "ietf"])
    func commandResumesByDefault(mode: String) async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("big.bin", size: 8 << 20, seed: 7)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let log = directory.path + "/cuts.log"
        let finished = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 2_000_000, cuts: 1, log: log)
            defer { proxy.stop() }
            return try await offPool {
                try ChildProcess("env", ["XDG_STATE_HOME=" + directory.path + "/state", formpostBinary, "-s", "-S"]
                                 + Self.resumableArguments(mode, file: file, port: proxyPort)).finish()
            }
        }
        #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == 1, "the proxy cut the upload once")
        #expect(finished.status == 0, "exit \(finished.status): \(String(decoding: finished.stderr, as: UTF8.self))")
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 1, "one file stored: \(stored)")
        let name = try #require(stored.first)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + name))) == expected)
    }

    @Test("formpost --resumable tus --retry 0 gives up at the cut: exit 55, failed after 1 attempt")
    func commandWithoutRetries() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("big.bin", size: 8 << 20, seed: 8)
        let finished = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 2_000_000, cuts: 1, log: directory.path + "/cuts.log")
            defer { proxy.stop() }
            return try await offPool {
                try ChildProcess("env", ["XDG_STATE_HOME=" + directory.path + "/state", formpostBinary, "-s", "-S", "--retry", "0"]
                                 + Self.resumableArguments("tus", file: file, port: proxyPort)).finish()
            }
        }
        let message = String(decoding: finished.stderr, as: UTF8.self)
        #expect(finished.status == 55, "exit \(finished.status): \(message)")
        #expect(message.contains("1 attempt"), "\(message)")
    }
}

extension TusClientTests {
    @Test("formpost --resumable killed after its upload completed but before it reported the answer reports that answer when run again: nothing uploaded anew, one file stored",
          arguments: ["tus", "ietf"])
    func commandKilledBeforeReporting(mode: String) async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("big.bin", size: 2 << 20, seed: 9)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        // The first run writes the server's answer to `-o` once the upload is complete, then
        // blocks printing its report to a pipe that is full, and is killed there: the report
        // (and forgetting the upload, which follows it) never happens.
        let report = try FullPipe()
        defer { report.closeEnds() }
        let firstAnswer = directory.path + "/first-answer"
        let answer = directory.path + "/answer.json"
        let state = "XDG_STATE_HOME=" + directory.path + "/state"
        let (second, stored) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            try await offPool { () -> (ChildProcess.Finished, [String]) in
                let arguments = Self.resumableArguments(mode, file: file, port: port)
                let first = try ChildProcess("env", [state, formpostBinary, "-s", "--json", "-o", firstAnswer] + arguments,
                                             stdout: .descriptor(report.writeEnd), stderr: .discard)
                // However long a busy machine takes: the answer's file appears only once the upload is complete.
                let deadline = Date().addingTimeInterval(120)
                while !FileManager.default.fileExists(atPath: firstAnswer), first.isRunning, Date() < deadline { usleep(20_000) }
                let answered = FileManager.default.fileExists(atPath: firstAnswer)
                if first.isRunning { kill(first.pid, SIGKILL) }
                let killed = try first.finish()
                try #require(answered && killed.status == 128 + SIGKILL, "the first run completed the upload and was killed before its report: exit \(killed.status)")
                let second = try ChildProcess("env", [state, formpostBinary, "-s", "--json", "-o", answer] + arguments).finish()
                return (second, try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") })
            }
        }
        #expect(second.status == 0, "exit \(second.status): \(String(decoding: second.stderr, as: UTF8.self))")
        let summary = try #require(try JSONSerialization.jsonObject(with: second.stdout) as? [String: Any])
        #expect(summary["bytes_sent"] as? Int == 0, "the second run sent nothing: \(summary)")
        #expect(stored.count == 1, "one file stored: \(stored)")
        let name = try #require(stored.first)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + name))) == expected)
        if mode == "ietf" {
            let receipt = try JSONDecoder().decode(Receipt.self, from: Data(contentsOf: URL(fileURLWithPath: answer)))
            #expect(receipt.files.map(\.sha256) == [expected], "the answer is the form's receipt")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/state/formpost").isEmpty, "the upload is forgotten once reported")
    }
}
