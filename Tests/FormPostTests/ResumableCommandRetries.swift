import Foundation
import Testing

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
            let (proxy, proxyPort) = try startCuttingProxy(to: port, after: 2_000_000, cuts: 1, log: log)
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
            let (proxy, proxyPort) = try startCuttingProxy(to: port, after: 2_000_000, cuts: 1, log: directory.path + "/cuts.log")
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
