import Multipart

/// `application/x-www-form-urlencoded` text the AFNetworking way: the fields of a
/// `FormValue` (dictionary keys sorted, `key[nested]`, `key[]` for arrays,
/// `key` for each element of a set), names and values percent-encoded as RFC 3986 allows
/// in a query (unreserved characters, `/` and `?` are left; a space is `%20`; `null` is an
/// empty value).
///
///     ["user": ["name": "Ann Lee"], "tags": ["a&b"]]  →  tags%5B%5D=a%26b&user%5Bname%5D=Ann%20Lee
public enum URLEncodedForm {
    /// The encoded text of `parameters`.
    public static func encode(_ parameters: [String: FormValue]) -> String {
        FormValue.dictionary(parameters).flattened()
            .map { escape(Array($0.name.utf8)) + "=" + escape($0.value) }
            .joined(separator: "&")
    }

    /// `bytes` percent-encoded for a query component.
    public static func escape(_ bytes: [UInt8]) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if isLeftAsIs(byte) {
                escaped.append(byte)
            } else {
                escaped += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func isLeftAsIs(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }
}
