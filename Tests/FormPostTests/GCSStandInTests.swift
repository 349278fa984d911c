import Foundation
import FormPostServer
import Multipart
import Testing

/// `formpost serve --store` on a store whose writes ignore `If-Match` and `If-None-Match`, as
/// Google Cloud Storage's XML API does — a proxy in front of moto (Tests/Interop/s3_gcs_proxy.py).
@Suite struct GCSStandInTests {
    @Test("resumable uploads refused at start (exit 69) with a sentence naming the flags that switch them off; with those flags, a 9 MiB form is stored whole")
    func formsOnly() async throws {
        let store = try await MotoStore()
        let behind = try await ServeBehindProxy(store, proxy: "s3_gcs_proxy.py")
        let directory = behind.directory

        let command = behind.serveCommand(port: try freePort(), prefix: "gcs")
        let refused = try await offPool { try ChildProcess("env", command, stdout: .discard, stderr: .capture).finish(timeout: 60) }
        let sentence = String(decoding: refused.stderr, as: UTF8.self)
        #expect(refused.status == 69, "\(refused.status): \(sentence)")
        #expect(sentence.contains("ConditionalWritesIgnored") && sentence.contains("--no-tus --no-resumable"), "\(sentence)")

        guard let (forms, port) = try await behind.startServe(prefix: "gcs", ["--no-tus", "--no-resumable"]) else { return }
        defer { forms.stop() }
        let form = directory.path + "/form.bin"
        let bytes = Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })
        try bytes.write(to: URL(fileURLWithPath: form))
        let answer = try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(form)", "http://127.0.0.1:\(port)/"]) }
        let file = try #require(try JSONDecoder().decode(Receipt.self, from: Data(answer.utf8)).files.first, "\(answer)")
        let stored = try await store.contents().objects.first { $0.key == file.storedAs }
        #expect(stored?.sha256 == sha256Hex(bytes) && stored?.size == bytes.count, "\(String(describing: stored))")
        let tus = try await offPool { try Subprocess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Tus-Resumable: 1.0.0",
                                                               "-H", "Upload-Length: 5", "http://127.0.0.1:\(port)/files"]) }
        #expect(tus != "201", "a tus creation was taken on a store without conditional writes: \(tus)")
        withExtendedLifetime(behind) {}
    }
}
