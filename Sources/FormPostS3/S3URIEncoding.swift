/// Percent-encoding as AWS Signature Version 4 canonicalises it (RFC 3986's unreserved
/// characters `A–Z a–z 0–9 - _ . ~` stay, every other UTF-8 byte becomes `%XX` in capitals):
/// for object keys in a path, `/` stays; in a query, it is encoded too. A space is `%20`,
/// never `+`, and `+` itself is `%2B`.
package enum S3URIEncoding {
    /// `value` encoded; `/` kept when `keepingSlash`.
    package static func encode(_ value: String, keepingSlash: Bool = false) -> String {
        var encoded = ""
        encoded.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0F)
            }
        }
        return encoded
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> String {
        String(Unicode.Scalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10))
    }
}
