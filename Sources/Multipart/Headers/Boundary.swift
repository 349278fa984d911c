/// The boundary that separates the parts of a `multipart/form-data` body.
///
/// A random boundary (the default) carries 128 bits from the system's
/// cryptographic generator, e.g. `formpost-9f86d081884c7d659a2feaa0c55ad015`.
/// A caller-chosen one is checked against RFC 2046 §5.1.1: 1 to 70 characters
/// of `bchars`, not ending in a space.
public struct Boundary: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The boundary's text, without the leading `--` of a delimiter line.
    public let value: String
    /// Whether the boundary was chosen at random. A random boundary of 128 bits makes
    /// a collision with content negligible, so file and stream content is not scanned.
    public let isRandom: Bool

    /// Creates a random boundary: `formpost-` followed by 32 hexadecimal digits (128 bits).
    public static func random() -> Boundary {
        let bits = SystemRandomBytes.next128()
        let value = String(unsafeUninitializedCapacity: randomPrefix.utf8.count + 32) { text in
            var count = 0
            for byte in randomPrefix.utf8 {
                text[count] = byte
                count += 1
            }
            for var word in [bits.low, bits.high] {
                for _ in 0..<16 {
                    text[count] = hexDigit(UInt8(truncatingIfNeeded: word & 0xF))
                    word >>= 4
                    count += 1
                }
            }
            return count
        }
        return Boundary(unchecked: value, isRandom: true)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
    }

    /// Creates a caller-chosen boundary, validated per RFC 2046.
    ///
    /// - Throws: ``MultipartError/invalidBoundary(_:reason:)`` when `value` is empty,
    ///   longer than 70 characters, holds a character outside `bchars`, or ends in a space.
    public init(_ value: String) throws {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty else {
            throw MultipartError.invalidBoundary(value, reason: "it is empty")
        }
        guard bytes.count <= 70 else {
            throw MultipartError.invalidBoundary(value, reason: "it has \(bytes.count) characters, more than the 70 RFC 2046 allows")
        }
        if let bad = bytes.first(where: { !Self.isBChar($0) }) {
            let shown = bad >= 0x21 && bad < 0x7F ? "'\(Character(Unicode.Scalar(bad)))'" : "byte 0x\(String(bad, radix: 16))"
            throw MultipartError.invalidBoundary(value, reason: "\(shown) is not allowed (RFC 2046 bchars are letters, digits and '()+_,-./:=? and space)")
        }
        guard bytes.last != 0x20 else {
            throw MultipartError.invalidBoundary(value, reason: "it ends in a space")
        }
        self.init(unchecked: value, isRandom: false)
    }

    /// A boundary recorded from an earlier form, to produce that form's bytes again (an
    /// upload resumed by another run of a process). One of the shape of ``random()`` counts
    /// as random again; any other is checked as ``init(_:)`` checks it.
    ///
    /// - Throws: ``MultipartError/invalidBoundary(_:reason:)``.
    public init(resuming value: String) throws {
        let digits = value.utf8.dropFirst(Self.randomPrefix.utf8.count)
        if value.hasPrefix(Self.randomPrefix), digits.count == 32,
           digits.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) {
            self.init(unchecked: value, isRandom: true)
        } else {
            try self.init(value)
        }
    }

    private static let randomPrefix = "formpost-"

    init(unchecked value: String, isRandom: Bool) {
        self.value = value
        self.isRandom = isRandom
    }

    public var description: String { value }

    /// The delimiter that precedes every part but the first: `CRLF--boundary`.
    var delimiter: [UInt8] { Array("\r\n--\(value)".utf8) }

    /// The `Content-Type` header value: `multipart/form-data; boundary=…`, quoted when the
    /// boundary holds a character that is not allowed in an HTTP token.
    public var contentType: String {
        let needsQuotes = value.utf8.contains { !HeaderField.isTokenByte($0) }
        return needsQuotes ? "multipart/form-data; boundary=\"\(value)\"" : "multipart/form-data; boundary=\(value)"
    }

    static func isBChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("'()+_,-./:=? ".utf8).contains(byte)
        }
    }
}
