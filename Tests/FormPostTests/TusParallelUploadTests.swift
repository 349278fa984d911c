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

/// FormPost's tus client sending one file as partial uploads at once, joined by the server
/// (``TusUploader/parallelUploads``, `formpost --resumable tus --parallel N`): to tuspyserver
/// (an independent server that offers concatenation); to `formpost serve` through a proxy
/// that cuts requests, and killed and run again; to object storage, where the store joins
/// them; and as one upload to a server without concatenation.
@Suite("Parallel resumable uploads sent (tus concatenation)", .serialized, .timeLimit(.minutes(5)))
struct TusParallelUploadTests {
    static let retry = RetryPolicy(maxRetries: 8, baseDelay: .milliseconds(20))

    @Test("TusUploader with 4 parallel uploads to tuspyserver: four partial uploads, then the server's final upload is the file; the parts' entries are removed")
    func toTuspyServer() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 24 << 20, seed: 9)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let state = ResumeStateStore(directory: directory.path + "/state")
        let (result, completed) = try await TusClientTests().withTuspyServer(directory: directory.path) { port, completed in
            var uploader = TusUploader(chunkSize: 4 << 20, retry: Self.retry, stateStore: state)
            uploader.parallelUploads = 4
            let result = try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(port)/files/")!)
            return (result, try String(contentsOfFile: completed, encoding: .utf8).split(separator: "\n").map(String.init))
        }
        #expect(result.response.status == 201 && result.bytesSent == 24 << 20, "\(result.response.status) \(result.bytesSent)")
        // Four partial uploads completed, then the final one, named by the result.
        #expect(completed.count == 5, "\(completed)")
        let final = try #require(completed.last)
        #expect(final.hasSuffix("/" + result.uploadURL.lastPathComponent), "\(final) is not \(result.uploadURL)")
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: final))) == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.directory).isEmpty, "the parts' entries are removed")
    }

    @Test("TusUploader with 4 parallel uploads to formpost serve through a proxy that cuts two requests: each part resumes on its own, and the stored file is the file, alone")
    func throughCuts() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let file = try directory.file("data.bin", size: 24 << 20, seed: 9)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let log = directory.path + "/cuts.log"
        let result = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let (proxy, proxyPort) = try await startCuttingProxy(to: port, after: 2_000_000, cuts: 2, log: log)
            defer { proxy.stop() }
            var uploader = TusUploader(chunkSize: 4 << 20, retry: Self.retry, stateStore: ResumeStateStore(directory: directory.path + "/state"))
            uploader.parallelUploads = 4
            return try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(proxyPort)/files")!)
        }
        #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count == 2, "the proxy cut two requests")
        #expect(result.response.status == 201 && result.bytesSent == 24 << 20, "\(result.response.status) \(result.bytesSent)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 1, "\(stored)")
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + (stored.first ?? "")))) == expected)
    }

    @Test("formpost --resumable tus --parallel 3 killed with SIGKILL mid-upload resumes each part when run again, sending only what the server lacks; formpost serve stores the joined file alone")
    func commandKilledAndResumed() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let size = 48 << 20
        let file = try directory.file("big.bin", size: size, seed: 6)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let (first, second) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            try await killedAndRunAgain(["--resumable", "tus", "--parallel", "3", "--chunk-size", "4M", "-T", file, "http://127.0.0.1:\(port)/files"],
                                        stateHome: directory.path + "/state", stateDirectory: uploads.path + "/.tus")
        }
        try expectResumedAfterKill(first: first, second: second, size: size, uploads: uploads.path, expected: expected)
        // The partial uploads' bytes went once joined: the states of the final upload and of
        // the three partial uploads naming it are left, and no data.
        let states = try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.tus")
        #expect(states.count == 4 && states.allSatisfy { $0.hasSuffix(".json") }, "\(states)")
    }

    @Test("TusUploader with 4 parallel uploads to formpost serve on object storage (moto): the parts are joined, and the stored object is the file, alone; no partial upload's bytes are left")
    func toObjectStorage() async throws {
        try await TusCreationExtensionTests.withServe(.objects) { serve in
            let file = try serve.samples.file("data.bin", size: 40 << 20, seed: 3)
            var uploader = TusUploader(chunkSize: 64 << 20, retry: Self.retry, stateStore: nil)
            uploader.parallelUploads = 4
            let result = try await uploader.upload(fileAt: file, to: URL(string: serve.base + "/files")!)
            #expect(result.response.status == 201 && result.bytesSent == 40 << 20, "\(result.response.status) \(result.bytesSent)")
            let stored = try await TusCreationExtensionTests.storedFile(result.uploadURL.absoluteString)
            let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
            let read = try await serve.storedSHA256(stored.storedAs)
            #expect(stored.sha256 == expected && read == expected)
            #expect(try await serve.storedFiles() == [stored.storedAs])
            #expect(try await serve.uploadBytesLeft().isEmpty)
        }
    }

    @Test("TusUploader with 4 parallel uploads to a server without concatenation (tuspyserver announcing none) sends one upload")
    func withoutConcatenation() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 6 << 20, seed: 3)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let (result, completed) = try await TusClientTests().withTuspyServer(directory: directory.path, arguments: ["--without-concatenation"]) { port, completed in
            var uploader = TusUploader(chunkSize: 64 << 20, retry: Self.retry, stateStore: nil)
            uploader.parallelUploads = 4
            let result = try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(port)/files/")!)
            return (result, try String(contentsOfFile: completed, encoding: .utf8).split(separator: "\n").map(String.init))
        }
        #expect(result.response.status == 204 && result.bytesSent == 6 << 20, "one upload completed by its append: \(result.response.status)")
        #expect(completed.count == 1, "one upload, not partial ones: \(completed)")
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: try #require(completed.first)))) == expected)
    }
}
