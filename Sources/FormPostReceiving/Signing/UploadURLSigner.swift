#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import Multipart

/// Signed upload URLs, for the flow where an application server authorizes an upload and
/// the browser sends it straight to `formpost serve` (or an `UploadServer`): the
/// application signs a method, a path, an expiry and optionally a size limit with a key
/// it shares with the receiving server, and hands the URL to the browser; the server
/// verifies it before it reads a byte of the body.
///
/// Three query parameters are added to the URL:
///
/// | parameter | value |
/// | --- | --- |
/// | `X-FormPost-Expires` | the Unix time (seconds) after which the URL is refused |
/// | `X-FormPost-Max-Bytes` | the most bytes the upload may hold (absent: no limit of its own) |
/// | `X-FormPost-Signature` | HMAC-SHA256 of the string to sign under the key, 64 lowercase hex digits |
///
/// The string to sign is five lines joined by a line feed (`0x0A`), with no line feed at
/// the end: the scheme's name, the method in capitals, the path exactly as sent in the
/// request target (percent-encoding and all, without the query), the expiry in decimal,
/// and the limit in decimal (an empty line when there is none). For `POST /upload` until
/// 1767225600 with at most 10 MiB:
///
/// ```
/// FORMPOST-HMAC-SHA256\nPOST\n/upload\n1767225600\n10485760
/// ```
///
/// that is the bytes `46 4F 52 4D 50 4F 53 54 2D 48 4D 41 43 2D 53 48 41 32 35 36 0A`
/// (`FORMPOST-HMAC-SHA256\n`) `50 4F 53 54 0A` (`POST\n`) `2F 75 70 6C 6F 61 64 0A`
/// (`/upload\n`) `31 37 36 37 32 32 35 36 30 30 0A` (`1767225600\n`)
/// `31 30 34 38 35 37 36 30` (`10485760`). Other query parameters are not signed (the
/// receivers do not read the query). The signature is compared in constant time.
public struct UploadURLSigner: Sendable {
    private let key: [UInt8]

    /// The fewest bytes a key may have: as many as the HMAC-SHA256 code.
    public static let minimumKeyLength = 32
    /// The query parameter of the expiry, in Unix seconds.
    public static let expiresParameter = "X-FormPost-Expires"
    /// The query parameter of the signed size limit, in bytes.
    public static let maxBytesParameter = "X-FormPost-Max-Bytes"
    /// The query parameter of the signature: 64 lowercase hex digits.
    public static let signatureParameter = "X-FormPost-Signature"
    /// The first line of every string to sign: the scheme and its version.
    public static let scheme = "FORMPOST-HMAC-SHA256"
    /// How far past its expiry a URL is still taken, for clocks of the signing and the
    /// receiving server that differ a little: 60 seconds.
    public static let defaultClockSkew: Int64 = 60
    /// The longest a signed URL lives: 7 days (604,800 seconds), as AWS's presigned URLs.
    /// A URL whose expiry lies further ahead than that (and the clock skew) is refused, so
    /// that a leaked URL is good for a week at most.
    public static let maxLifetime: Int64 = 7 * 86_400

    /// A signer with `key`, raw bytes (at least ``minimumKeyLength`` of them, from a good
    /// random source: `head -c 32 /dev/urandom > key`).
    ///
    /// - Throws: ``SigningKeyError/tooShort(length:path:)`` for a shorter key.
    public init(key: [UInt8]) throws(SigningKeyError) {
        guard key.count >= Self.minimumKeyLength else { throw .tooShort(length: key.count, path: nil) }
        self.key = key
    }

    /// A signer with the raw bytes of the file at `path` as its key (every byte counts,
    /// a line feed at the end too).
    ///
    /// - Throws: ``SigningKeyError`` when the file cannot be read or is too short.
    public init(keyFile path: String) throws(SigningKeyError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        guard data.count >= Self.minimumKeyLength else { throw .tooShort(length: data.count, path: path) }
        key = Array(data)
    }

    /// The exact string signed for `method`, `path`, `expires` and `maxBytes`.
    public static func stringToSign(method: String, path: String, expires: Int64, maxBytes: Int64?) -> String {
        [scheme, method.uppercased(), path, String(expires), maxBytes.map { String($0) } ?? ""].joined(separator: "\n")
    }

    /// `target` (a path, possibly with a query) with the signature's query parameters
    /// appended: the request `method` to it is allowed until `expires` (Unix seconds),
    /// holding at most `maxBytes` when given. The path signed is `target` up to its `?`.
    ///
    /// ```swift
    /// let signer = try UploadURLSigner(keyFile: "/etc/formpost/key")
    /// let target = signer.signedTarget(method: "POST", path: "/upload", expires: 1767225600, maxBytes: 10 << 20)
    /// // /upload?X-FormPost-Expires=1767225600&X-FormPost-Max-Bytes=10485760&X-FormPost-Signature=…
    /// ```
    public func signedTarget(method: String, path target: String, expires: Int64, maxBytes: Int64? = nil) -> String {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        let message = Self.stringToSign(method: method, path: path, expires: expires, maxBytes: maxBytes)
        let signature = Hexadecimal.string(authenticationCode(for: message))
        var parameters = ["\(Self.expiresParameter)=\(expires)"]
        if let maxBytes { parameters.append("\(Self.maxBytesParameter)=\(maxBytes)") }
        parameters.append("\(Self.signatureParameter)=\(signature)")
        let separator = target.contains("?") ? (target.hasSuffix("?") || target.hasSuffix("&") ? "" : "&") : "?"
        return target + separator + parameters.joined(separator: "&")
    }

    /// Verifies a request: its `method` and its `target` as sent (path and query). Returns
    /// what the signature allows when it is there, valid, for this method and path, and not
    /// expired at `now` (Unix seconds) by more than `clockSkew` seconds.
    ///
    /// - Throws: ``UploadSignatureRefusal`` saying why not.
    public func verify(method: String, target: String, now: Int64, clockSkew: Int64 = defaultClockSkew) throws(UploadSignatureRefusal) -> SignedUploadGrant {
        let (path, values) = try Self.parameters(of: target, named: [Self.expiresParameter, Self.maxBytesParameter, Self.signatureParameter])
        guard let signatureText = values[Self.signatureParameter] else { throw .missing }
        guard let signature = Self.bytes(hex: signatureText) else { throw .malformed("\(Self.signatureParameter) is not 64 hex digits") }
        guard let expiresText = values[Self.expiresParameter] else { throw .malformed("\(Self.expiresParameter) is missing") }
        guard let expires = Self.decimal(expiresText) else { throw .malformed("\(Self.expiresParameter) is not a Unix time in seconds") }
        var maxBytes: Int64?
        if let text = values[Self.maxBytesParameter] {
            guard let value = Self.decimal(text) else { throw .malformed("\(Self.maxBytesParameter) is not a number of bytes") }
            maxBytes = value
        }
        let message = Self.stringToSign(method: method, path: path, expires: expires, maxBytes: maxBytes)
        guard isValid(signature, for: message) else { throw .mismatch }
        // Checked after the signature, so that a forged expiry is never reported as one.
        guard now <= expires || now - expires <= clockSkew else { throw .expired(expires: expires, now: now) }
        guard expires - now <= Self.maxLifetime + clockSkew else { throw .tooLong(expires: expires, now: now) }
        return SignedUploadGrant(expires: expires, maxBytes: maxBytes)
    }

    /// The path of `target` (up to its `?`), and the values of the query parameters of
    /// `names` it has (others are ignored).
    ///
    /// - Throws: ``UploadSignatureRefusal/malformed(_:)`` for one of `names` given twice.
    static func parameters(of target: String, named names: [String]) throws(UploadSignatureRefusal) -> (path: String, values: [String: Substring]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var values: [String: Substring] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(nameAndValue[0])
            guard names.contains(name) else { continue }
            guard values[name] == nil else { throw .malformed("\(name) is given more than once") }
            values[name] = nameAndValue.count > 1 ? nameAndValue[1] : ""
        }
        return (String(parts[0]), values)
    }

    /// The HMAC-SHA256 code of `message` under the key.
    func authenticationCode(for message: String) -> [UInt8] {
        HMACSHA256.authenticationCode(for: Array(message.utf8), key: key)
    }

    /// Whether `code` is that of `message` under the key, compared in constant time.
    func isValid(_ code: [UInt8], for message: String) -> Bool {
        HMACSHA256.isValidAuthenticationCode(code, for: Array(message.utf8), key: key)
    }

    /// A decimal count of at most 18 digits (so that it fits in 63 bits), nothing else.
    static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }

    /// The 32 bytes that 64 hexadecimal digits spell, or nil.
    static func bytes(hex text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
