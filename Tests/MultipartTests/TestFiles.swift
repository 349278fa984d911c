import Foundation
@testable import Multipart

/// A temporary directory for one test, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "formpost-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `bytes` to `name` inside the directory and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let filePath = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: filePath))
        return filePath
    }

    func file(_ name: String, _ text: String) throws -> String { try file(name, Array(text.utf8)) }
}

/// Deterministic pseudo-random bytes for test content (xorshift).
struct TestRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}

/// An async sequence of fixed chunks, for stream parts.
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

/// Reads a whole plan through a chunk reader with the given chunk size.
func readAll(_ plan: BodyPlan, chunkSize: Int) async throws -> [UInt8] {
    let reader = plan.makeChunkReader(chunkSize: chunkSize)
    var out: [UInt8] = []
    while let chunk = try await reader.next() { out += chunk }
    return out
}

/// The text of a body, for readable golden comparisons.
func text(_ bytes: some Sequence<UInt8>) -> String { String(decoding: Array(bytes), as: UTF8.self) }
