import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// FormPost's tus client: against tuspyserver (an independent tus server from PyPI)
/// through a proxy that cuts requests, and `formpost --resumable tus` killed and run again.
@Suite("Resumable uploads sent (tus)")
struct TusClientTests {
    /// Runs tuspyserver on a free port storing into `directory`, then `body` with its port
    /// and the file its completed uploads are listed in.
    func withTuspyServer<T: Sendable>(directory: String, arguments: [String] = [], _ body: @Sendable (Int, String) async throws -> T) async throws -> T {
        let port = try freePort()
        let completed = directory + "/completed.log"
        let server = try ChildProcess("python3", [Subprocess.interopScript("tus_server.py"), String(port), directory + "/files", completed] + arguments,
                                      stdout: .discard, stderr: .inherit)
        defer { server.stop() }
        try await RawSocket.waitForListener(port: port, attempts: 400)
        return try await body(port, completed)
    }

    @Test("TusUploader sends a file to tuspyserver through a proxy that cuts three requests: it asks for the offset, goes on, and the stored file is intact")
    func uploaderThroughCuts() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 12 << 20, seed: 4)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let state = ResumeStateStore(directory: directory.path + "/state")
        let log = directory.path + "/cuts.log"
        let (result, stored) = try await withTuspyServer(directory: directory.path) { port, completed in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 1_500_000, cuts: 3, log: log)
            defer { proxy.stop() }
            let uploader = TusUploader(chunkSize: 4 << 20, retry: RetryPolicy(maxRetries: 8, baseDelay: .milliseconds(20)), stateStore: state)
            let acknowledged = UploadsSeen()
            let result = try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(proxyPort)/files/")!) { progress in
                acknowledged.add(progress.acknowledged)
            }
            let stored = try String(contentsOfFile: completed, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(acknowledged.values == acknowledged.values.sorted(), "acknowledged bytes never go back")
            return (result, stored)
        }
        #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == 3)
        #expect(result.resumedFrom == 0 && result.bytesSent == 12 << 20)
        #expect(stored.count == 1)
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: try #require(stored.first)))) == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.directory).isEmpty, "a completed upload's entry is removed")
    }

    @Test("formpost --resumable tus killed with SIGKILL mid-upload resumes when run again, sending only what the server lacks")
    func commandKilledAndResumed() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("big.bin", size: 48 << 20, seed: 5)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let (first, second) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            try await killedAndRunAgain(["--resumable", "tus", "--chunk-size", "8M", "-T", file, "http://127.0.0.1:\(port)/files"],
                                        stateHome: directory.path + "/state", stateDirectory: uploads.path + "/.tus")
        }
        try expectResumedAfterKill(first: first, second: second, size: 48 << 20, uploads: uploads.path, expected: expected)
    }
}

/// Values seen by a progress handler, from any thread.
final class UploadsSeen: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Int64] = []

    func add(_ value: Int64) { lock.withLock { seen.append(value) } }
    var values: [Int64] { lock.withLock { seen } }
}

extension TusClientTests {
    @Test("a file that changes while it is uploaded stops the upload with fileChanged: nothing mixed is sent")
    func fileChangedMidUpload() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("changing.bin", size: 6 << 20, seed: 2)
        let error = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let uploader = TusUploader(chunkSize: 1 << 20, retry: .none, stateStore: ResumeStateStore(directory: directory.path + "/state"))
            do {
                _ = try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(port)/files")!) { progress in
                    if progress.acknowledged >= 1 << 20, let handle = FileHandle(forWritingAtPath: file) {
                        handle.seekToEndOfFile()
                        handle.write(Data([1]))
                        handle.closeFile()
                    }
                }
                return nil as ResumableUploadError?
            } catch let error as ResumableUploadError {
                return error
            }
        }
        guard case .fileChanged(let path, _) = try #require(error) else {
            Issue.record("expected fileChanged, got \(String(describing: error))")
            return
        }
        #expect(path.hasSuffix("changing.bin"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }.isEmpty, "nothing was stored")
    }
}
