/// A parsed `Content-Disposition` value: its type and its `name` and `filename` parameters.
///
/// Parameters may be quoted or bare, in any case. Quoted values undo browser escaping
/// (`%22`, `%0D`, `%0A`); a backslash is an ordinary character, as browsers write it; `filename*=UTF-8''…` (RFC 5987, sent by
/// some older clients) is decoded and preferred over `filename`.
public struct ContentDispositionValue: Equatable, Sendable {
    /// The disposition type, lowercased, e.g. `form-data`.
    public let type: String
    /// The `name` parameter.
    public let name: String?
    /// The `filename` parameter (from `filename*` when present).
    public let filename: String?

    /// Parses `value`; nil when it has no type.
    public init?(parsing value: String) {
        var scanner = ParameterScanner(Array(value.utf8))
        let type = scanner.token().lowercased()
        guard !type.isEmpty else { return nil }
        var name: String?
        var filename: String?
        var extendedFilename: String?
        while let (key, raw, quoted) = scanner.parameter() {
            switch key.lowercased() {
            case "name": name = quoted ? Self.unescapeBrowser(raw) : raw
            case "filename": filename = quoted ? Self.unescapeBrowser(raw) : raw
            case "filename*": extendedFilename = Self.decodeExtended(raw)
            default: break
            }
        }
        self.type = type
        self.name = name
        self.filename = extendedFilename ?? filename
    }

    /// Undoes the browser escapes `%22`, `%0D` and `%0A` (case-insensitive); other `%` are kept.
    static func unescapeBrowser(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count {
                let code = String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self).uppercased()
                let decoded: UInt8? = code == "22" ? 0x22 : code == "0D" ? 0x0D : code == "0A" ? 0x0A : nil
                if let decoded {
                    out.append(decoded)
                    index += 3
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes an RFC 5987 value `charset'language'percent-encoded`; nil when malformed.
    static func decodeExtended(_ raw: String) -> String? {
        let pieces = raw.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let charset = pieces[0].lowercased()
        guard charset == "utf-8" || charset == "iso-8859-1" || charset == "us-ascii" else { return nil }
        var out: [UInt8] = []
        var bytes = Array(pieces[2].utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        if charset == "iso-8859-1" { return String(out.map { Character(Unicode.Scalar($0)) }) }
        return String(validating: out, as: UTF8.self)
    }
}

/// Scans `token *( ";" key "=" ( token | quoted-string ) )` leniently.
struct ParameterScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func token() -> String {
        skipSpaces()
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: ";"), bytes[index] != UInt8(ascii: "="), !isSpace(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// The next parameter as (key, value, whether it was quoted), or nil at the end.
    mutating func parameter() -> (String, String, Bool)? {
        while true {
            skipSpaces()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ";") {
                index += 1
                continue
            }
            let key = token()
            skipSpaces()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                if key.isEmpty { index += 1 }
                continue
            }
            index += 1
            skipSpaces()
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                return (key, quotedString(), true)
            }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ";") { index += 1 }
            var end = index
            while end > start, isSpace(bytes[end - 1]) { end -= 1 }
            return (key, String(decoding: bytes[start..<end], as: UTF8.self), false)
        }
    }

    /// A quoted string up to the next `"`. Browsers do not escape backslashes, so none is undone here.
    private mutating func quotedString() -> String {
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { break }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func skipSpaces() {
        while index < bytes.count, isSpace(bytes[index]) { index += 1 }
    }

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
