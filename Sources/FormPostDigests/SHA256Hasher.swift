#if canImport(CryptoKit)
import CryptoKit
#else
import CFormPostDigests
#endif

/// A running SHA-256 (FIPS 180-4): the digest of stored files, of receipts and of a
/// resumable form's identity. A value: a copy goes on independently.
/// (`@unchecked`: plain state, but CryptoKit does not mark its hash functions `Sendable`.)
///
/// On Apple platforms this is CryptoKit's. Elsewhere it is the package's own C, with the
/// x86-64 SHA extensions where the processor has them, so that hashing brings in neither
/// Foundation nor anything that loads it (swift-crypto imports Foundation).
package struct SHA256Hasher: @unchecked Sendable {
    #if canImport(CryptoKit)
    private var hasher = CryptoKit.SHA256()
    #else
    private var context = cformpost_sha256_context()
    #endif

    /// A hash of no bytes yet.
    package init() {
        #if !canImport(CryptoKit)
        cformpost_sha256_init(&context)
        #endif
    }

    /// Hashes `bytes` after those already hashed.
    package mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        #if canImport(CryptoKit)
        hasher.update(bufferPointer: bytes)
        #else
        cformpost_sha256_update(&context, bytes.baseAddress, bytes.count)
        #endif
    }

    /// The digest of `bytes` alone.
    package static func digest(of bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256Hasher()
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return hasher.finalize()
    }

    /// The 32-byte digest of the bytes hashed so far; the hash itself is left as it was.
    package func finalize() -> [UInt8] {
        #if canImport(CryptoKit)
        return Array(hasher.finalize())
        #else
        var digest = [UInt8](repeating: 0, count: 32)
        withUnsafePointer(to: context) { cformpost_sha256_final($0, &digest) }
        return digest
        #endif
    }
}
