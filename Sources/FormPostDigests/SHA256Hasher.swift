import Crypto

/// A running SHA-256 (FIPS 180-4): the digest of stored files, of receipts and of a
/// resumable form's identity. A value: a copy goes on independently.
///
/// swift-crypto's `SHA256`: CryptoKit's on Apple platforms, BoringSSL's elsewhere (which uses
/// the processor's SHA extensions where it has them). swift-crypto 4 imports only
/// FoundationEssentials where it can, so hashing loads no ICU.
/// (`@unchecked`: plain state, but CryptoKit does not mark its hash functions `Sendable`.)
package struct SHA256Hasher: @unchecked Sendable {
    private var hasher = Crypto.SHA256()

    /// A hash of no bytes yet.
    package init() {}

    /// Hashes `bytes` after those already hashed.
    package mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// The digest of `bytes` alone.
    package static func digest(of bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256Hasher()
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return hasher.finalize()
    }

    /// The 32-byte digest of the bytes hashed so far; the hash itself is left as it was.
    package func finalize() -> [UInt8] {
        Array(hasher.finalize())
    }
}
