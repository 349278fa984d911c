import Foundation
import Multipart

/// A temporary directory with sample files for one test.
final class SampleDirectory: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "formpost-client-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `count` deterministic bytes to `name` and returns the path: byte `i` is
    /// `i × 31 + seed` modulo 256.
    ///
    /// The pattern repeats every 256 bytes, so one block of it is computed and written over
    /// and over. Computing every byte of a large file in a debug build would keep a thread of
    /// the Swift concurrency pool for seconds per 10 MB, and the pool has one per core: the
    /// other tests of the process, and the in-process servers they talk to, would wait.
    func file(_ name: String, size count: Int, seed: UInt8 = 1) throws -> String {
        let filePath = path + "/" + name
        let block = (0..<min(count, Self.patternBlockSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
        guard FileManager.default.createFile(atPath: filePath, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filePath))
        defer { try? handle.close() }
        var written = 0
        while written < count {
            let length = min(block.count, count - written)
            try handle.write(contentsOf: block[0..<length])
            written += length
        }
        return filePath
    }

    /// The block ``file(_:size:seed:)`` repeats: a multiple of the pattern's 256 bytes.
    private static let patternBlockSize = 64 << 10
}

/// A form with fields, a data part and a file.
func sampleForm(_ directory: SampleDirectory, fileSize: Int = 300_000) throws -> MultipartForm {
    var form = MultipartForm()
    form.append(name: "title", value: "Hello ✓")
    form.append(name: "blob", bytes: [0, 1, 2, 255], filename: "blob.bin")
    try form.append(name: "file", fileAt: try directory.file("sample.dat", size: fileSize))
    return form
}

/// An async sequence of fixed chunks.
struct Chunks: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let chunks: [[UInt8]]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: [[UInt8]]
        mutating func next() async throws -> [UInt8]? {
            remaining.isEmpty ? nil : remaining.removeFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: chunks) }
}
