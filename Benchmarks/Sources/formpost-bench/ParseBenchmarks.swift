import CMemmemScan
import Foundation
import Multipart
import MultipartKit
import NIOCore

/// `formpost-bench parse`: our parser, fed NIO buffers and parsing them in place, against
/// multipart-kit 4.7.1's on the same chunks, and against a bare memmem(3) scan of the same
/// chunks for the delimiter (the least any parser must do).
///
/// `parse` uses random bytes (a CR every 256 bytes on average); `parse-no-cr` the same
/// bytes with every CR replaced, the best case for multipart-kit, which scans for CR.
struct ParseBenchmarks {
    let size: Int
    let runs: Int

    func run() async throws {
        let random = Filler.bytes(size, seed: 11)
        try await run(workload: "parse", content: random)
        try await run(workload: "parse-no-cr", content: random.map { $0 == 0x0D ? 0x0E : $0 })
    }

    func run(workload: String, content: [UInt8]) async throws {
        var form = MultipartForm()
        for index in 0..<10 { form.append(name: "field\(index)", value: "value \(index)") }
        form.append(name: "file", bytes: content, filename: "random.bin")
        let plan = try form.plan()
        let body = try await plan.encodedData()
        let chunkSize = 64 * 1024
        let allocator = ByteBufferAllocator()
        var chunks: [ByteBuffer] = []
        chunks.reserveCapacity(body.count / chunkSize + 1)
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunkSize, body.count)
            var buffer = allocator.buffer(capacity: end - offset)
            buffer.writeBytes(body[offset..<end])
            chunks.append(buffer)
            offset = end
        }
        let expectedContent = size + 10 * "value 0".utf8.count
        Measurement.resetPeakRSS()
        var oursCount = 0
        var theirsCount = 0
        let times = try await Measurement.alternate(runs: runs, ours: {
            oursCount = try parseWithFormPost(chunks, contentType: plan.contentType)
        }, theirs: {
            theirsCount = try parseWithMultipartKit(chunks, boundary: plan.boundary.value)
        })
        guard oursCount == expectedContent, theirsCount == expectedContent else {
            throw BenchmarkFailure("parsers saw \(oursCount) and \(theirsCount) content bytes, expected \(expectedContent)")
        }
        BenchmarkResult(workload: workload, bytes: Int64(body.count), ours: times.ours, reference: "multipart-kit", theirs: times.theirs, peakRSS: Measurement.peakRSS()).printLine()
        guard workload == "parse" else { return }
        var delimiters = 0
        let scans = try await Measurement.alternate(runs: runs, ours: {
            oursCount = try parseWithFormPost(chunks, contentType: plan.contentType)
        }, theirs: {
            delimiters = scanWithMemmem(chunks, delimiter: Array("\r\n--\(plan.boundary.value)".utf8))
        })
        guard oursCount == expectedContent, delimiters >= 10 else {
            throw BenchmarkFailure("the parser saw \(oursCount) content bytes (expected \(expectedContent)), memmem \(delimiters) delimiters")
        }
        BenchmarkResult(workload: "parse-vs-memmem", bytes: Int64(body.count), ours: scans.ours, reference: "memmem", theirs: scans.theirs, peakRSS: Measurement.peakRSS()).printLine()
    }

    /// Parses the chunks as a server would receive them (NIO buffers), counting content bytes.
    private func parseWithFormPost(_ chunks: [ByteBuffer], contentType: String) throws -> Int {
        var parser = try MultipartParser(contentType: contentType)
        var content = 0
        for chunk in chunks {
            try chunk.withUnsafeReadableBytes { bytes in
                try parser.parse(bytes) { event in
                    if case .body(let view) = event { content += view.count }
                }
            }
        }
        try parser.finish()
        return content
    }

    /// Counts the delimiters in the chunks with memmem(3) (one chunk at a time: a delimiter
    /// split between two chunks is not counted, which only flatters the reference).
    private func scanWithMemmem(_ chunks: [ByteBuffer], delimiter: [UInt8]) -> Int {
        var found = 0
        delimiter.withUnsafeBytes { needle in
            for chunk in chunks {
                chunk.withUnsafeReadableBytes { found += memmem_scan_count($0.baseAddress!, $0.count, needle.baseAddress!, needle.count) }
            }
        }
        return found
    }

    private func parseWithMultipartKit(_ chunks: [ByteBuffer], boundary: String) throws -> Int {
        let parser = MultipartKit.MultipartParser(boundary: boundary)
        var content = 0
        parser.onBody = { content += $0.readableBytes }
        for chunk in chunks { try parser.execute(chunk) }
        return content
    }
}
