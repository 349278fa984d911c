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
        try await behind.sendFormAndTus(port: port, form: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
                                        tus: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }))
        let contents = try await store.contents()
        #expect(contents.objects.allSatisfy { $0.tags.isEmpty })

        let lines = try await ServeBehindProxy.stop(serve)
        #expect(lines.contains("no object tagging") && lines.contains("DELETE ignores If-Match"), "\(lines)")
        #expect(!lines.contains("error"), "\(lines)")
        let log = try await behind.proxyLines().joined(separator: "\n")
        #expect(log.contains("-> 429") && log.contains("-> 501"), "the store's limits were not met: \(log)")
    }
}
