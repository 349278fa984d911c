import Foundation
import Testing

/// A receiver whose lease on an upload lapsed while its completion waited must not harm what
/// another receiver stored meanwhile.
@Suite("Object storage: a lapsed lease")
struct ObjectStorageLapsedLeaseTests {
    @Test("a small tus upload completing on A, whose save is held while its lease lapses (503 to its lease writes), is stored on B; A's refused save then removes only what A wrote: B's stored object stays, whole, and nothing of A's is left",
          .timeLimit(.minutes(3)))
    func lapsedHolderRemovesOnlyItsOwn() async throws {
        let store = try await MotoStore()
        let sample = try SampleDirectory()
        let marker = sample.path + "/holding"
        let proxyPort = try freePort()
        let proxy = try ChildProcess("python3", [Subprocess.interopScript("s3_fault_proxy.py"), String(proxyPort), String(store.port), "-1", "6",
                                                 "PUT", ".info", marker], stdout: .discard, stderr: .discard)
        defer { proxy.stop() }
        try await RawSocket.waitForListener(port: proxyPort)
        func serve(through port: Int, _ name: String) async throws -> (ChildProcess, Int) {
            let serverPort = try freePort()
            let server = try ChildProcess("env", MotoStore.credentials + [formpostBinary, "serve", "--port", String(serverPort), "--dir", sample.path + "/" + name,
                                                                         "--store", "s3://\(store.bucket)/shared", "--s3-endpoint", "http://127.0.0.1:\(port)",
                                                                         "--s3-lease", "1"], stdout: .discard, stderr: .discard)
            try await RawSocket.waitForListener(port: serverPort, attempts: 1200)
            return (server, serverPort)
        }
        let (first, firstPort) = try await serve(through: proxyPort, "a")
        defer { first.stop() }
        let (second, secondPort) = try await serve(through: store.port, "b")
        defer { second.stop() }
        let tus = ["-H", "Tus-Resumable: 1.0.0"]
        let append = tus + ["-H", "Upload-Offset: 0", "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "hello"]

        let created = try await offPool {
            try SignedUploadServeTests.curl(["-D", "-", "-X", "POST"] + tus + ["-H", "Upload-Length: 5", "http://127.0.0.1:\(firstPort)/files"])
        }
        let location = try #require(ObjectStorageResumableTests.location(in: created), "\(created.body)")
        // A takes every byte and begins to complete: its save is held, its lease lapses.
        let onFirst = Task { try await offPool { try SignedUploadServeTests.curl(["-X", "PATCH"] + append + ["http://127.0.0.1:\(firstPort)" + location]) } }
        let (onSecond, state) = try await offPool { () -> (SignedUploadServeTests.Answer, SignedUploadServeTests.Answer) in
            for _ in 0..<600 where !FileManager.default.fileExists(atPath: marker) { usleep(50_000) }
            guard FileManager.default.fileExists(atPath: marker) else { throw Subprocess.Failure(description: "A's completing save never came") }
            // The client goes on with B, which waits out A's lease (423 meanwhile).
            for _ in 0..<240 {
                let answer = try SignedUploadServeTests.curl(["-X", "PATCH"] + append + ["http://127.0.0.1:\(secondPort)" + location])
                if answer.status != 423 {
                    return (answer, try SignedUploadServeTests.curl(tus + ["http://127.0.0.1:\(secondPort)" + location]))
                }
                usleep(250_000)
            }
            throw Subprocess.Failure(description: "B never took the upload")
        }
        #expect(onSecond.status == 204, "\(onSecond.body)")
        let firstAnswer = try await onFirst.value
        #expect(firstAnswer.status != 204, "A answered its refused completion \(firstAnswer.status): \(firstAnswer.body)")
        struct Stored: Decodable {
            struct File: Decodable { let storedAs: String }
            struct Receipt: Decodable { let files: [File] }
            let complete: Bool
            let receipt: Receipt?
        }
        let answered = try JSONDecoder().decode(Stored.self, from: Data(state.body.utf8))
        let key = try #require(answered.receipt?.files.first?.storedAs, "\(state.body)")
        #expect(answered.complete)
        let objects = try await store.contents().objects.filter { !$0.key.contains(".tus/") && !$0.key.contains(".formpost-probe") }
        #expect(objects.map(\.key) == [key], "stored: \(objects.map(\.key)), B's receipt names \(key)")
        #expect(objects.first?.sha256 == sha256Hex(Data("hello".utf8)))
        try await offPool {
            first.stop()
            second.stop()
            proxy.stop()
        }
    }
}
