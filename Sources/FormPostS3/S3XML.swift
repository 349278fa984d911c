/// The little of S3's XML a receiver reads — an element's text (`UploadId`, an error's
/// `Code` and `Message`, a listing's keys) — and writes: text escaped for an element.
enum S3XML {
    /// The text of the first element `name` in `xml`, its entities decoded; nil without one.
    static func text(of name: String, in xml: String) -> String? {
        guard let open = xml.firstRange(of: "<\(name)>"), let close = xml[open.upperBound...].firstRange(of: "</\(name)>") else { return nil }
        return unescaped(String(xml[open.upperBound..<close.lowerBound]))
    }

    /// The contents of each element `name` in `xml`, in order, as they are (entities not
    /// decoded: read them with ``text(of:in:)``).
    static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.firstRange(of: "<\(name)>"), let close = rest[open.upperBound...].firstRange(of: "</\(name)>") {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` as entities.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    private static func unescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacing("&lt;", with: "<").replacing("&gt;", with: ">")
            .replacing("&quot;", with: "\"").replacing("&apos;", with: "'")
            .replacing("&#34;", with: "\"").replacing("&amp;", with: "&")
    }
}
