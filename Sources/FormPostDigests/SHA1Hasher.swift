import Crypto

/// A running SHA-1, for the tus checksum extension's `sha1` only (tus clients still offer
/// it); never for anything the package itself relies on. A value: a copy goes on
/// independently. swift-crypto's `Insecure.SHA1`.
/// (`@unchecked`: plain state, but CryptoKit does not mark its hash functions `Sendable`.)
package struct SHA1Hasher: @unchecked Sendable {
    private var hasher = Insecure.SHA1()

    /// A hash of no bytes yet.
    package init() {}

    /// Hashes `bytes` after those already hashed.
    package mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// The 20-byte digest of the bytes hashed so far; the hash itself is left as it was.
    package func finalize() -> [UInt8] {
        Array(hasher.finalize())
    }
}
