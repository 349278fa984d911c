import Foundation
import Testing
import Multipart
import NIOCore
@testable import FormPost
import FormPostFoundation
@testable import FormPostURLSession
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer

@Suite("Blocking file I/O stays off the Swift concurrency pool")
struct BlockingIOTests {
    @Test("encoders blocked on a full pipe leave the pool free for other tasks")
    func encoders() async throws {
        let directory = try SampleDirectory()
        var form = MultipartForm()
        form.append(name: "note", value: "a field first")
        try form.append(name: "big", fileAt: try directory.file("big.bin", size: 1 << 20))
        let plan = try form.plan()
        let expected = try await plan.encodedBytes()

        let outcome = try await FullPipes(directory: directory.path).run(length: expected.count) { descriptor in
            try await plan.write(to: FileHandle(fileDescriptor: descriptor, closeOnDealloc: false))
        }
        check(outcome, expected: expected)
    }

    @Test("the receiver's file writes blocked on a full pipe leave the pool free for other tasks")
    func receiverFiles() async throws {
        let directory = try SampleDirectory()
        let content = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try directory.file("big.bin", size: 1 << 20))))
        let outcome = try await FullPipes(directory: directory.path).run(length: content.count) { descriptor in
            var sink = FileSink(descriptor: dup(descriptor), partialPath: "/nonexistent/partial", directory: "/nonexistent", storedName: "stored", mode: 0o600)
            // In pieces the size a connection delivers them.
            var offset = 0
            while offset < content.count {
                let end = min(offset + 65_536, content.count)
                try await sink.write(ByteBuffer(bytes: content[offset..<end]))
                offset = end
            }
            // Renaming the pipe fails (its path is not where the sink thinks): every byte was written by then.
            await #expect(throws: (any Error).self) { _ = try await sink.complete() }
        }
        check(outcome, expected: content)
    }

    @Test("the tus uploader's checksum reads blocked on a full pipe leave the pool free for other tasks")
    func tusChecksums() async throws {
        let directory = try SampleDirectory()
        let content = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try directory.file("big.bin", size: 1 << 20))))
        let outcome = try await FullPipes(directory: directory.path).run(length: content.count) { descriptor in
            // The checksum reads its part through the plan as it reads a file region: here each
            // piece is first written to the pipe, a read that blocks as a stalled disk's does.
            var form = MultipartForm()
            form.append(name: "big", length: Int64(content.count)) { PipeWritingChunks(content: content, descriptor: descriptor) }
            let plan = try form.plan()
            let digest = try await TusExchange.digest(of: plan, with: .sha256)
            let inMemory = BodyPlan(boundary: plan.boundary, segments: plan.segments.map { segment -> BodySegment in
                if case .stream = segment { return .bytes(content) } else { return segment }
            })
            let expected = try await TusExchange.digest(of: inMemory, with: .sha256)
            #expect(digest == expected)
        }
        check(outcome, expected: content)
    }

    private func check(_ outcome: FullPipes.Outcome, expected: [UInt8]) {
        let ranWhileBlocked = outcome.probeRanWhileBlocked, writersWereBlocked = outcome.writersWereBlocked
        #expect(ranWhileBlocked, "a task waited \(outcome.probeWaited) for a thread")
        #expect(writersWereBlocked)
        let delivered = outcome.received.map(\.count)
        #expect(delivered == Array(repeating: expected.count, count: FullPipes(directory: "").writers))
        let intact = outcome.received.allSatisfy { $0 == expected }
        #expect(intact, "a pipe delivered other bytes than the body")
    }
}

/// `content` in pieces of 64 KiB, each written whole to `descriptor` (blocking while the
/// pipe is full) before it is handed out.
private struct PipeWritingChunks: AsyncSequence, Sendable {
    let content: [UInt8]
    let descriptor: Int32

    struct AsyncIterator: AsyncIteratorProtocol {
        let content: [UInt8]
        let descriptor: Int32
        var offset = 0

        mutating func next() async throws -> [UInt8]? {
            guard offset < content.count else { return nil }
            let piece = Array(content[offset..<Swift.min(offset + 65_536, content.count)])
            offset += piece.count
            var written = 0
            while written < piece.count {
                let count = piece.withUnsafeBytes { POSIX.write(descriptor, $0.baseAddress! + written, piece.count - written) }
                guard count > 0 else { throw POSIXError(.EIO) }
                written += count
            }
            return piece
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(content: content, descriptor: descriptor) }
}
