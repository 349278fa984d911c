/// One header line of a part: `Name: value`.
///
/// Names must be HTTP tokens; values must not contain CR, LF or NUL, so a caller can
/// never inject a header line or break the body's framing.
public struct HeaderField: Equatable, Hashable, Sendable {
    /// The header's name, e.g. `Content-ID`.
    public let name: String
    /// The header's value, written as UTF-8.
    public let value: String

    /// Creates a header field, refusing names that are not tokens and values with CR, LF or NUL.
    ///
    /// `HeaderField(name: "X-Note", value: "café")` is written as `X-Note: café\r\n`.
    /// - Throws: ``MultipartError/invalidHeader(name:reason:)``.
    public init(name: String, value: String) throws {
        guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
            throw MultipartError.invalidHeader(name: name, reason: "a header name must be a non-empty HTTP token (letters, digits and !#$%&'*+-.^_`|~)")
        }
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw MultipartError.invalidHeader(name: name, reason: "its value contains CR, LF or NUL")
        }
        self.name = name
        self.value = value
    }

    init(unchecked name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Appends the header's line as written: `Name: value` followed by CRLF.
    func write(to bytes: inout [UInt8]) {
        bytes += name.utf8
        bytes += [0x3A, 0x20]
        bytes += value.utf8
        bytes += [0x0D, 0x0A]
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
