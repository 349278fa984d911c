import CFormPostDigests
import Crypto
import Foundation
import FormPostDigests
import Testing

/// The package's own SHA-256 and SHA-1 (what FormPostServer and FormPost hash with, so
/// that they need no Foundation) give swift-crypto's (BoringSSL's) digests: both SHA-256
/// block functions (portable C and, where the processor has them, the x86-64 SHA
/// extensions), every length around the block and padding edges, any chunking, copies
/// that go on independently.
@Suite("Digests", .serialized)
struct DigestTests {
    static let lengths = Array(0...200) + [447, 448, 511, 512, 513, 1_000, 4_095, 4_096, 65_537, 1_048_583]

    /// The block functions to compare: portable always, accelerated where available.
    static var implementations: [cformpost_sha256_implementation] {
        [cformpost_sha256_portable] + (cformpost_sha256_has_accelerated() == 1 ? [cformpost_sha256_accelerated] : [])
    }

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

    @Test("SHA-256 equals swift-crypto's for every length and chunking, with each block function")
    func sha256MatchesSwiftCrypto() throws {
        defer { _ = cformpost_sha256_select(cformpost_sha256_automatic) }
        #if os(Linux) && arch(x86_64)
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        if cpuinfo.contains(" sha_ni") { #expect(cformpost_sha256_has_accelerated() == 1, "the processor has SHA-NI, the check says no") }
        #endif
        for implementation in Self.implementations {
            #expect(cformpost_sha256_select(implementation) == 0)
            for (index, length) in Self.lengths.enumerated() {
                let content = Self.bytes(length, seed: UInt64(index + 1))
                let expected = Array(SHA256.hash(data: content))
                for chunks in [[length + 1], [1], [63, 65, 7], [4096]] {
                    var hasher = SHA256Hasher()
                    Self.feed(&hasher, content, chunks: chunks) { $0.update(bufferPointer: $1) }
                    #expect(hasher.finalize() == expected, "\(implementation) length \(length) chunks \(chunks)")
                }
            }
        }
    }

    @Test("SHA-256 of known vectors, and a copy hashes on independently")
    func sha256VectorsAndCopies() {
        #expect(SHA256Hasher.digest(of: []) == Array(SHA256.hash(data: [UInt8]())))
        let abc = SHA256Hasher.digest(of: Array("abc".utf8))
        #expect(abc.map { String(format: "%02x", $0) }.joined() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var first = SHA256Hasher()
        Array("ab".utf8).withUnsafeBytes { first.update(bufferPointer: $0) }
        var copy = first
        Array("c".utf8).withUnsafeBytes { copy.update(bufferPointer: $0) }
        #expect(copy.finalize() == abc)
        #expect(first.finalize() == SHA256Hasher.digest(of: Array("ab".utf8)))
        #expect(first.finalize() == first.finalize(), "finalize changed the hash")
    }

    @Test("SHA-1 equals swift-crypto's for every length and chunking")
    func sha1MatchesSwiftCrypto() {
        for (index, length) in Self.lengths.enumerated() {
            let content = Self.bytes(length, seed: UInt64(1_000 + index))
            let expected = Array(Insecure.SHA1.hash(data: content))
            for chunks in [[length + 1], [1], [63, 65, 7]] {
                var hasher = SHA1Hasher()
                Self.feed(&hasher, content, chunks: chunks) { $0.update(bufferPointer: $1) }
                #expect(hasher.finalize() == expected, "length \(length) chunks \(chunks)")
            }
        }
    }
}
