import Foundation
import FormPostDigests
import Testing

/// The SHA-256 and SHA-1 that FormPostServer and FormPost hash with (swift-crypto's) give
/// what coreutils' `sha256sum` and `sha1sum` give, an implementation of their own: every
/// length around the block and padding edges, any chunking, copies that go on independently.
@Suite("Digests")
struct DigestTests {
    static let lengths = Array(0...130) + [447, 448, 511, 512, 513, 1_000, 4_095, 4_096, 65_537, 1_048_583]

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9e37_79b9_7f4a_7c15 | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// Feeds `content` in chunks of the sizes `chunks` cycles through.
    static func feed<H>(_ hasher: inout H, _ content: [UInt8], chunks: [Int], update: (inout H, UnsafeRawBufferPointer) -> Void) {
        var offset = 0, index = 0
        content.withUnsafeBytes { all in
            while offset < content.count {
                let size = min(chunks[index % chunks.count], content.count - offset)
                update(&hasher, UnsafeRawBufferPointer(rebasing: all[offset..<offset + size]))
                offset += size
                index += 1
            }
        }
    }

    /// `contents` written to files, and what `tool` (`sha256sum`, `sha1sum`) says of each.
    static func digests(by tool: String, of contents: [[UInt8]]) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("formpost-digests-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try contents.enumerated().map { index, content in
            let path = directory + "/\(index)"
            try Data(content).write(to: URL(fileURLWithPath: path))
            return path
        }
        let finished = try ChildProcess(tool, paths).finish()
        guard finished.status == 0 else { throw Subprocess.Failure(description: "\(tool) exited \(finished.status)") }
        return String(decoding: finished.stdout, as: UTF8.self).split(separator: "\n").map { String($0.prefix { $0 != " " }) }
    }

    static func hex(_ digest: [UInt8]) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    @Test("SHA-256 equals sha256sum's for every length and chunking")
    func sha256MatchesCoreutils() throws {
        let contents = Self.lengths.enumerated().map { Self.bytes($1, seed: UInt64($0 + 1)) }
        let expected = try Self.digests(by: "sha256sum", of: contents)
        #expect(expected.count == contents.count)
        for (content, expected) in zip(contents, expected) {
            for chunks in [[content.count + 1], [1], [63, 65, 7], [4096]] {
                var hasher = SHA256Hasher()
                Self.feed(&hasher, content, chunks: chunks) { $0.update(bufferPointer: $1) }
                #expect(Self.hex(hasher.finalize()) == expected, "length \(content.count) chunks \(chunks)")
            }
        }
    }

    @Test("SHA-256 of known vectors, and a copy hashes on independently")
    func sha256VectorsAndCopies() {
        #expect(Self.hex(SHA256Hasher.digest(of: [])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let abc = SHA256Hasher.digest(of: Array("abc".utf8))
        #expect(Self.hex(abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var first = SHA256Hasher()
        Array("ab".utf8).withUnsafeBytes { first.update(bufferPointer: $0) }
        var copy = first
        Array("c".utf8).withUnsafeBytes { copy.update(bufferPointer: $0) }
        #expect(copy.finalize() == abc)
        #expect(first.finalize() == SHA256Hasher.digest(of: Array("ab".utf8)))
        #expect(first.finalize() == first.finalize(), "finalize changed the hash")
    }

    @Test("SHA-1 equals sha1sum's for every length and chunking")
    func sha1MatchesCoreutils() throws {
        let contents = Self.lengths.enumerated().map { Self.bytes($1, seed: UInt64(1_000 + $0)) }
        let expected = try Self.digests(by: "sha1sum", of: contents)
        #expect(expected.count == contents.count)
        for (content, expected) in zip(contents, expected) {
            for chunks in [[content.count + 1], [1], [63, 65, 7]] {
                var hasher = SHA1Hasher()
                Self.feed(&hasher, content, chunks: chunks) { $0.update(bufferPointer: $1) }
                #expect(Self.hex(hasher.finalize()) == expected, "length \(content.count) chunks \(chunks)")
            }
        }
    }
}
