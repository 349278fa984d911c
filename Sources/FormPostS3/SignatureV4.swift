import FormPostReceiving
import FormPostDigests

/// AWS Signature Version 4 with header signing, for S3 and the services that speak its API:
/// the canonical request, the string to sign, the signing key derived from the secret, and
/// the fields a request carries (`x-amz-date`, `x-amz-content-sha256`, the session token and
/// `Authorization`). Sans-IO: it signs the head a caller gives it and sends nothing.
///
/// The payload is named by its SHA-256 in hexadecimal, or ``unsignedPayload`` when the body
/// is not part of the signature. Tests check every signature against botocore's.
package struct SignatureV4: Sendable {
    /// A request field, as signed and sent.
    package typealias Field = (name: String, value: String)

    /// `x-amz-content-sha256` for a body the signature does not cover.
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The credentials signed with.
    package let credentials: S3Credentials
    /// The region of the credential scope (`us-east-1` where the service has no regions).
    package let region: String
    /// The service of the credential scope: `s3`.
    package let service: String

    package init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The fields to add to a request for it to be accepted: `x-amz-date`,
    /// `x-amz-content-sha256`, `x-amz-security-token` with temporary credentials, and
    /// `Authorization` last. `encodedPath` is the path as sent (an object key encoded with
    /// ``S3URIEncoding/encode(_:keepingSlash:)`` keeping `/`); `query` and `fields` are as the
    /// caller sends them, unencoded; `host` is the `Host` field (with a port when not the
    /// scheme's own). Every field given is signed.
    package func fields(method: String, host: String, encodedPath: String, query: [Field], fields: [Field],
                        payloadHash: String, at time: SigningTime) -> [Field] {
        var added: [Field] = [("x-amz-date", time.timestamp), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        let signed = [("host", host)] + fields + added
        let (canonicalFields, signedNames) = Self.canonical(fields: signed)
        let canonicalRequest = [
            method.uppercased(), encodedPath.isEmpty ? "/" : encodedPath, Self.canonical(query: query),
            canonicalFields, signedNames, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(time.date)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", time.timestamp, scope, Self.hex(SHA256Hasher.digest(of: Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        let signature = Self.hex(HMACSHA256.authenticationCode(for: Array(stringToSign.utf8), key: signingKey(date: time.date)))
        added.append(("authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)"))
        return added
    }

    /// `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
    private func signingKey(date: Substring) -> [UInt8] {
        var key = Array(("AWS4" + credentials.secretAccessKey).utf8)
        for step in [String(date), region, service, "aws4_request"] {
            key = HMACSHA256.authenticationCode(for: Array(step.utf8), key: key)
        }
        return key
    }

    /// Names in lower case, sorted; values trimmed and inner runs of spaces folded to one;
    /// a name given twice signed once, its values joined by commas.
    private static func canonical(fields: [Field]) -> (block: String, names: String) {
        var values: [String: [String]] = [:]
        for field in fields {
            let value = field.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            values[field.name.lowercased(), default: []].append(value)
        }
        let names = values.keys.sorted()
        return (names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }.joined(), names.joined(separator: ";"))
    }

    /// Each name and value encoded, sorted by encoded name and then value, as `a=1&b=`.
    private static func canonical(query: [Field]) -> String {
        query.map { (S3URIEncoding.encode($0.name), S3URIEncoding.encode($0.value)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// Lower-case hexadecimal.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text.append(digits[Int(byte >> 4)]); text.append(digits[Int(byte & 0x0F)]) }
        return String(decoding: text, as: UTF8.self)
    }
}
