import Crypto

/// HMAC-SHA256 (RFC 2104), as AWS Signature Version 4 derives its signing key and signs:
/// swift-crypto's `HMAC<SHA256>`.
package enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    package static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(HMAC<Crypto.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
