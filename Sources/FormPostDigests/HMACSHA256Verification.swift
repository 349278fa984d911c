import Crypto

extension HMACSHA256 {
    /// Whether `code` is the authentication code of `message` under `key`, compared in
    /// constant time (swift-crypto's `HMAC.isValidAuthenticationCode`): how long the answer
    /// takes tells nothing of how many leading bytes matched.
    package static func isValidAuthenticationCode(_ code: [UInt8], for message: [UInt8], key: [UInt8]) -> Bool {
        HMAC<Crypto.SHA256>.isValidAuthenticationCode(code, authenticating: message, using: SymmetricKey(data: key))
    }
}
