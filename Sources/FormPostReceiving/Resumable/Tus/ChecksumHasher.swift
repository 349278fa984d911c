import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ResumableHTTP

/// The digest of one tus append's content, to compare with its `Upload-Checksum`.
enum ChecksumHasher {
    case sha256(SHA256Hasher)
    case sha1(SHA1Hasher)

    init(_ algorithm: TusChecksumAlgorithm) {
        switch algorithm {
        case .sha256: self = .sha256(SHA256Hasher())
        case .sha1: self = .sha1(SHA1Hasher())
        }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .sha256(var hasher):
            hasher.update(bufferPointer: bytes)
            self = .sha256(hasher)
        case .sha1(var hasher):
            hasher.update(bufferPointer: bytes)
            self = .sha1(hasher)
        }
    }

    /// The digest, base64-encoded as `Upload-Checksum` carries it.
    func finalizeBase64() -> String {
        switch self {
        case .sha256(let hasher): return Data(hasher.finalize()).base64EncodedString()
        case .sha1(let hasher): return Data(hasher.finalize()).base64EncodedString()
        }
    }
}
