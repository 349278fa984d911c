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
        let proxyPort = try freePort()
        let proxy = try ChildProcess("python3", [Subprocess.interopScript("s3_gcs_proxy.py"), String(proxyPort), String(store.port)])
        defer { proxy.stop() }
        try await RawSocket.waitForListener(port: proxyPort)
        let directory = try SampleDirectory()
        @Sendable func serve(_ port: Int, _ flags: [String]) throws -> ChildProcess {
            try ChildProcess("env", MotoStore.credentials + [formpostBinary, "serve", "--port", String(port), "--dir", directory.path + "/unused",
                                                             "--store", "s3://\(store.bucket)/gcs", "--s3-endpoint", "http://127.0.0.1:\(proxyPort)"] + flags,
                             stdout: .discard, stderr: .capture)
        }

        let refused = try await offPool { try serve(try freePort(), []).finish(timeout: 60) }
        let sentence = String(decoding: refused.stderr, as: UTF8.self)
        #expect(refused.status == 69, "\(refused.status): \(sentence)")
        #expect(sentence.contains("ConditionalWritesIgnored") && sentence.contains("--no-tus --no-resumable"), "\(sentence)")

        let port = try freePort()
        let forms = try serve(port, ["--no-tus", "--no-resumable"])
        defer { forms.stop() }
        guard try await forms.waitUntilListening(port: port, seconds: 60) else {
            let finished = try await offPool { try forms.finish(timeout: 5) }
            Issue.record("formpost serve --no-tus --no-resumable did not start (\(finished.status)): \(String(decoding: finished.stderr, as: UTF8.self))")
            return
        }
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
    }
}
