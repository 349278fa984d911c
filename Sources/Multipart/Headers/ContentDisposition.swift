/// Builds `Content-Disposition: form-data` values as browsers do (the WHATWG HTML
/// multipart/form-data encoding algorithm, RFC 7578 §4.2).
///
/// Names and filenames are written as UTF-8. In a name, a lone CR or LF is first
/// normalised to CRLF; then in names and filenames `"` becomes `%22`, CR `%0D` and
/// LF `%0A`. NUL, which no browser can send and no header may hold, becomes `%00`.
/// `filename*` is never written.
///
///     formData(name: "a\"b", filename: "ça\nva.txt")
///     // form-data; name="a%22b"; filename="ça%0Ava.txt"
public enum ContentDisposition {
    /// The header value for a part named `name`, with `filename` when given.
    public static func formData(name: String, filename: String? = nil) -> String {
        var value = "form-data; name=\"\(escape(normaliseNewlines(name)))\""
        if let filename {
            value += "; filename=\"\(escape(filename))\""
        }
        return value
    }

    /// Percent-escapes `"`, CR and LF as browsers do, and NUL; every other character is kept.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else { return text }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += Array("%22".utf8)
            case 0x0D: out += Array("%0D".utf8)
            case 0x0A: out += Array("%0A".utf8)
            case 0x00: out += Array("%00".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Replaces every CR not followed by LF, and every LF not preceded by CR, with CRLF.
    public static func normaliseNewlines(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(where: { $0 == 0x0D || $0 == 0x0A }) else { return text }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0D {
                out += [0x0D, 0x0A]
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { index += 1 }
            } else if byte == 0x0A {
                out += [0x0D, 0x0A]
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
