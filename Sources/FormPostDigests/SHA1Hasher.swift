#if canImport(CryptoKit)
import CryptoKit
#else
import CFormPostDigests
#endif

/// A running SHA-1, for the tus checksum extension's `sha1` only (tus clients still offer
/// it); never for anything the package itself relies on. A value: a copy goes on independently.
/// (`@unchecked`: plain state, but CryptoKit does not mark its hash functions `Sendable`.)
package struct SHA1Hasher: @unchecked Sendable {
    #if canImport(CryptoKit)
    private var hasher = Insecure.SHA1()
    #else
    private var context = cformpost_sha1_context()
    #endif

    /// A hash of no bytes yet.
    package init() {
        #if !canImport(CryptoKit)
        cformpost_sha1_init(&context)
        #endif
    }

    /// Hashes `bytes` after those already hashed.
    package mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        #if canImport(CryptoKit)
        hasher.update(bufferPointer: bytes)
        #else
        cformpost_sha1_update(&context, bytes.baseAddress, bytes.count)
        #endif
    }

    /// The 20-byte digest of the bytes hashed so far; the hash itself is left as it was.
    package func finalize() -> [UInt8] {
        #if canImport(CryptoKit)
        return Array(hasher.finalize())
        #else
        var digest = [UInt8](repeating: 0, count: 20)
        withUnsafePointer(to: context) { cformpost_sha1_final($0, &digest) }
        return digest
        #endif
    }
}
