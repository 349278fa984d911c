import Foundation
import Testing
@testable import Multipart

@Suite("Bodies from an offset")
struct SliceTests {
    @Test("any range of a body, sliced from its plan, is exactly those bytes of the whole", arguments: 1...6)
    func slices(seed: Int) async throws {
        let directory = try TemporaryDirectory()
        var random = TestRandom(state: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1)
        var form = MultipartForm()
        form.append(name: "title", value: "resumable")
        try form.append(name: "a", fileAt: try directory.file("a.bin", random.bytes(300_000)))
        form.append(name: "big", bytes: random.bytes(100_000), filename: "big.bin")
        try form.append(name: "b", fileAt: try directory.file("b.bin", random.bytes(5_000)))
        let plan = try form.plan()
        let whole = try await plan.encodedBytes()
        for _ in 0..<20 {
            let lower = Int64(random.int(0...whole.count))
            let upper = Int64(random.int(Int(lower)...whole.count))
            let sliced = try plan.slice(lower..<upper)
            #expect(sliced.contentLength == upper - lower)
            let bytes = try await sliced.encodedBytes()
            #expect(bytes == Array(whole[Int(lower)..<Int(upper)]), "range \(lower)..<\(upper)")
        }
    }

    @Test("a slice checks its file as the whole body does; a stream can be cut by no slice")
    func checks() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("f.bin", [UInt8](repeating: 1, count: 1000))
        var form = MultipartForm()
        try form.append(name: "f", fileAt: path)
        let plan = try form.plan()
        let tail = try plan.slice(500..<(plan.contentLength ?? 0))
        try Data(repeating: 2, count: 1001).write(to: URL(fileURLWithPath: path))
        await #expect(throws: MultipartError.self) { _ = try await tail.encodedBytes() }

        var streaming = MultipartForm()
        streaming.append(name: "s", length: 10) { AsyncStream<[UInt8]> { $0.yield(Array(repeating: 3, count: 10)); $0.finish() } }
        let streamPlan = try streaming.plan()
        let end = try #require(streamPlan.contentLength)
        let streamStart = try #require(streamPlan.segments.first?.length)
        #expect(throws: MultipartError.streamNotResumable(part: PartLabel(position: 1, name: "s"))) { _ = try streamPlan.slice((streamStart + 5)..<end) }
        let fromStream = try streamPlan.slice(streamStart..<end)
        #expect(fromStream.contentLength == end - streamStart)
        let bytes = try await fromStream.encodedBytes()
        #expect(bytes.prefix(10) == Array(repeating: 3, count: 10)[...])
    }
}
