#if os(Linux)
import Crypto
import Foundation
import FormPost
import Multipart
import Testing

/// A client sends a 1 GiB form to a handler that reads its parts slowly
/// (``SlowPartsReader``, on `FormParts`), in an app of each framework: the app must hold
/// back the client instead of buffering what the handler has not read. The app runs in a
/// child process — the tests' own executable, running ``SlowReaderApp`` — whose peak
/// resident set (`VmHWM`) the handler reports in its answer, once after a 1 MiB form and
/// again after the 1 GiB one. Linux only: `/proc`.
@Suite("A slow handler's memory")
struct SlowReaderMemoryTests {
    /// What the peak may grow by from the small form to the large one: the body's buffers in
    /// flight (a few MiB) and the allocator's arenas. Measured growth: see the test's output.
    static let allowedGrowthMiB = 64

    @Test("a 1 GiB form to a handler that stalls 2 s, then reads its parts at 200 MB/s: the app's peak RSS grows by at most 64 MiB over a 1 MiB form's, and the handler sees every byte",
          arguments: ReceiverAdapter.allCases)
    func boundedPeak(adapter: ReceiverAdapter) async throws {
        #if !Vapor
        if adapter == .vapor { throw ReceiverAdapter.AdapterError.builtWithoutVapor }
        #endif
        let port = try freePort()
        let app = try SlowReaderJob(adapter: adapter, port: port).start()
        defer { app.stop() }
        try await waitUntilListening(port: port)
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/parts"))
        let client = FormPostClient()
        let small = try await send(bytes: 1 << 20, to: url, with: client)
        let large = try await send(bytes: 1 << 30, to: url, with: client)
        let (smallMiB, largeMiB) = (small.peakKiB / 1024, large.peakKiB / 1024)
        print("slow handler on \(adapter): peak \(largeMiB) MiB after 1 GiB, \(smallMiB) MiB after 1 MiB")
        #expect(largeMiB - smallMiB <= Self.allowedGrowthMiB,
                "the \(adapter) app peaked at \(largeMiB) MiB receiving 1 GiB, \(smallMiB) MiB receiving 1 MiB: it buffered what its handler had not read")
    }

    /// Sends a form of one file part of `bytes` (a pseudo-random pattern) and checks the
    /// handler's account of it against what was sent.
    private func send(bytes: Int, to url: URL, with client: FormPostClient) async throws -> SlowPartsReader.Account {
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let chunks = bytes / chunk.count, tail = bytes % chunk.count
        var expected = SHA256()
        for _ in 0..<chunks { expected.update(data: chunk) }
        expected.update(data: chunk.prefix(tail))
        var form = MultipartForm()
        form.append(name: "note", value: "slow")
        form.append(name: "big", length: Int64(bytes), filename: "big.bin") {
            // Every element shares the one chunk's storage: the stream holds no copies.
            AsyncStream<[UInt8]> { continuation in
                for _ in 0..<chunks { continuation.yield(chunk) }
                if tail > 0 { continuation.yield(Array(chunk.prefix(tail))) }
                continuation.finish()
            }
        }
        let response = try await client.upload(form, to: url, strategy: .streaming, options: UploadOptions(timeout: .seconds(180)))
        try #require(response.status == 200, "the handler answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        let account = try JSONDecoder().decode(SlowPartsReader.Account.self, from: Data(response.body))
        #expect(account.parts.map(\.name) == ["note", "big"])
        #expect(account.parts.map(\.size) == [4, bytes])
        #expect(account.parts.last?.sha256 == expected.finalize().map { String(format: "%02x", $0) }.joined())
        return account
    }

    private func waitUntilListening(port: Int) async throws {
        for _ in 0..<1200 {
            if try RawSocket.connects(port: port) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("the slow reader's app accepted no connection within 30 s")
        throw CancellationError()
    }
}
#endif
