#if os(Linux)
import Crypto
import Foundation
import FormPost
import Multipart
import Synchronization
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
        try #require(try await app.waitUntilListening(port: port, seconds: 30), "the slow reader's app ended, or accepted no connection within 30 s")
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/parts"))
        let client = FormPostClient()
        let small = try await send(bytes: 1 << 20, to: url, with: client)
        let large = try await send(bytes: 1 << 30, to: url, with: client)
        let (smallMiB, largeMiB) = (small.peakKiB / 1024, large.peakKiB / 1024)
        print("slow handler on \(adapter): peak \(largeMiB) MiB after 1 GiB, \(smallMiB) MiB after 1 MiB")
        #expect(small.peakKiB > 0 && large.peakKiB >= small.peakKiB)
        #expect(largeMiB - smallMiB <= Self.allowedGrowthMiB,
                "the \(adapter) app peaked at \(largeMiB) MiB receiving 1 GiB, \(smallMiB) MiB receiving 1 MiB: it buffered what its handler had not read")
    }

    /// The `index`th MiB of the file part ``send(bytes:to:with:)`` sends: a pattern that does
    /// not repeat within the MiB, its first eight bytes the index, so that no two MiB are alike.
    static func chunk(_ index: Int) -> [UInt8] {
        var chunk = pattern
        withUnsafeBytes(of: UInt64(index).littleEndian) { chunk.replaceSubrange(0..<8, with: $0) }
        return chunk
    }

    /// A MiB whose bytes do not repeat with a short period; made once (a debug build makes
    /// it in a tenth of a second, not once per MiB sent).
    private static let pattern = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }

    /// `count` pieces, each made by `make` from its index as it is asked for.
    private struct Pieces: AsyncSequence, Sendable {
        let count: Int
        let make: @Sendable (Int) -> [UInt8]

        func makeAsyncIterator() -> Iterator { Iterator(count: count, make: make) }

        struct Iterator: AsyncIteratorProtocol {
            let count: Int
            let make: @Sendable (Int) -> [UInt8]
            var index = 0

            mutating func next() async -> [UInt8]? {
                guard index < count else { return nil }
                defer { index += 1 }
                return make(index)
            }
        }
    }

    /// Sends a form of a text field and a file part of `bytes` (``chunk(_:)`` after
    /// ``chunk(_:)``, made and hashed as they are sent) and checks the handler's account of
    /// it against what was sent.
    private func send(bytes: Int, to url: URL, with client: FormPostClient) async throws -> SlowPartsReader.Account {
        let mebibyte = 1 << 20, chunks = (bytes + mebibyte - 1) / mebibyte
        let sent = Mutex(SHA256())
        let piece: @Sendable (Int) -> [UInt8] = { index in
            var chunk = Self.chunk(index)
            chunk.removeSubrange(min(mebibyte, bytes - index * mebibyte)...)
            sent.withLock { $0.update(data: chunk) }
            return chunk
        }
        var form = MultipartForm()
        form.append(name: "note", value: "slow")
        form.append(name: "big", length: Int64(bytes), filename: "big.bin") { Pieces(count: chunks, make: piece) }
        let response = try await client.upload(form, to: url, strategy: .streaming, options: UploadOptions(timeout: .seconds(180)))
        try #require(response.status == 200, "the handler answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        let account = try JSONDecoder().decode(SlowPartsReader.Account.self, from: Data(response.body))
        #expect(account.parts.map(\.name) == ["note", "big"])
        #expect(account.parts.map(\.size) == [4, bytes])
        #expect(account.parts.last?.sha256 == hexString(sent.withLock { $0.finalize() }))
        return account
    }
}
#endif
