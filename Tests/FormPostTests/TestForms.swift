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

    /// Writes `count` deterministic bytes to `name` and returns the path.
    func file(_ name: String, size count: Int, seed: UInt8 = 1) throws -> String {
        let filePath = path + "/" + name
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
        try Data(bytes).write(to: URL(fileURLWithPath: filePath))
        return filePath
    }
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
