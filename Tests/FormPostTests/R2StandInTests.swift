import Foundation
import FormPostServer
import Multipart
import Testing

/// `formpost serve --store` on a store that behaves as Cloudflare R2 does where it differs
/// from S3: no object tagging (501), about one write per second to one key (429 past it), a
/// `DELETE` that ignores `If-Match` — a proxy in front of moto (Tests/Interop/s3_r2_proxy.py).
@Suite struct R2StandInTests {
    @Test("a 9 MiB form and a 9 MiB tus upload are stored whole: tags skipped, writes to one key spaced after the first 429")
    func formsAndTus() async throws {
        let store = try await MotoStore()
        let behind = try await ServeBehindProxy(store, proxy: "s3_r2_proxy.py")
        guard let (serve, port) = try await behind.startServe(prefix: "r2") else { return }
        defer { serve.stop() }
        let directory = behind.directory
        let form = directory.path + "/form.bin", tus = directory.path + "/tus.bin"
        try Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: form))
        try Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }).write(to: URL(fileURLWithPath: tus))

        let answer = try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(form)", "http://127.0.0.1:\(port)/"]) }
        let file = try #require(try JSONDecoder().decode(Receipt.self, from: Data(answer.utf8)).files.first, "\(answer)")
        let upload = try await offPool {
            try ChildProcess(formpostBinary, ["-sS", "--retry", "0", "--resumable", "tus", "--chunk-size", "4M", "-T", tus, "http://127.0.0.1:\(port)/files"]).finish(timeout: 120)
        }
        #expect(upload.status == 0, "\(String(decoding: upload.stderr, as: UTF8.self))")

        let contents = try await store.contents()
        let stored = Dictionary(contents.objects.filter { !$0.key.contains(".tus/") }.map { ($0.sha256, $0) }) { first, _ in first }
        #expect(stored[sha256Hex(try Data(contentsOf: URL(fileURLWithPath: form)))]?.key == file.storedAs, "\(contents.objects.map(\.key))")
        #expect(stored[sha256Hex(try Data(contentsOf: URL(fileURLWithPath: tus)))]?.size == 9 << 20, "\(contents.objects.map(\.key))")
        #expect(contents.objects.allSatisfy { $0.tags.isEmpty })

        let lines = try await ServeBehindProxy.stop(serve)
        #expect(lines.contains("no object tagging") && lines.contains("DELETE ignores If-Match"), "\(lines)")
        #expect(!lines.contains("error"), "\(lines)")
        let log = try await behind.proxyLines().joined(separator: "\n")
        #expect(log.contains("-> 429") && log.contains("-> 501"), "the store's limits were not met: \(log)")
    }
}
