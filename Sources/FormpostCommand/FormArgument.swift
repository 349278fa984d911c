/// One `-F`/`--form-string` argument in curl's syntax.
///
/// - `name=value` — a text field; `name=value;type=text/x` sets its type
/// - `name=@path` — a file part; `;type=`, `;filename=` and `;headers=` modifiers
/// - `name=<path` — a field whose value is the file's content
/// - `@-` and `<-` read standard input; values and modifiers may be double-quoted
///   (`name=@"a;b.txt";filename="x y"`, with `\"` and `\\` escapes)
/// - `--form-string name=value` takes the value literally
struct FormArgument: Equatable {
    enum Content: Equatable {
        case text(String)
        case file(path: String)
        case fileContent(path: String)
    }

    var name: String
    var content: Content
    var type: String?
    var filename: String?
    var headers: [String] = []

    /// Parses `argument`; `literal` for `--form-string`.
    static func parse(_ argument: String, literal: Bool = false) throws -> FormArgument {
        guard let equals = argument.firstIndex(of: "=") else {
            throw UsageError("-F \(argument): expected name=content")
        }
        let name = String(argument[..<equals])
        let value = String(argument[argument.index(after: equals)...])
        if literal { return FormArgument(name: name, content: .text(value)) }
        var scanner = ModifierScanner(Array(value.unicodeScalars))
        let kind: Character? = value.first == "@" ? "@" : value.first == "<" ? "<" : nil
        if kind != nil { scanner.skip() }
        let main = try scanner.value(allowQuotes: kind != nil)
        if kind != nil, main.isEmpty { throw MissingFileName(argument: argument) }
        var result: FormArgument
        switch kind {
        case "@": result = FormArgument(name: name, content: .file(path: main))
        case "<": result = FormArgument(name: name, content: .fileContent(path: main))
        default: result = FormArgument(name: name, content: .text(main))
        }
        while let (key, modifier) = try scanner.modifier() {
            switch key {
            case "type": result.type = modifier
            case "filename": result.filename = modifier
            case "headers": result.headers.append(modifier)
            default: throw UsageError("-F \(argument): unknown modifier \"\(key)\"")
            }
        }
        return result
    }
}

/// Reads a value and `;key=value` modifiers. A `;` that does not start a known modifier
/// is part of the value, as curl reads it.
struct ModifierScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    static let keys = ["type", "filename", "headers", "encoder"]

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    mutating func skip() { index += 1 }

    mutating func value(allowQuotes: Bool) throws -> String {
        if allowQuotes, index < scalars.count, scalars[index] == "\"" { return try quoted() }
        var out = String.UnicodeScalarView()
        while index < scalars.count {
            if scalars[index] == ";", startsModifier(at: index) { break }
            out.append(scalars[index])
            index += 1
        }
        return String(out)
    }

    mutating func modifier() throws -> (String, String)? {
        guard index < scalars.count, scalars[index] == ";" else { return nil }
        index += 1
        var key = String.UnicodeScalarView()
        while index < scalars.count, scalars[index] != "=" {
            key.append(scalars[index])
            index += 1
        }
        index += 1
        let value = try self.value(allowQuotes: true)
        return (String(key).trimmingSpaces.lowercased(), value)
    }

    private func startsModifier(at position: Int) -> Bool {
        let rest = String(String.UnicodeScalarView(scalars[(position + 1)...])).lowercased()
        return Self.keys.contains { rest.trimmingSpacesAtStart.hasPrefix($0 + "=") }
    }

    private mutating func quoted() throws -> String {
        index += 1
        var out = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\\", index < scalars.count, scalars[index] == "\"" || scalars[index] == "\\" {
                out.append(scalars[index])
                index += 1
            } else if scalar == "\"" {
                return String(out)
            } else {
                out.append(scalar)
            }
        }
        throw UsageError("unterminated quote in -F value")
    }
}

extension String {
    var trimmingSpaces: String { trimmingSpacesAtStart.reversedTrim }
    var trimmingSpacesAtStart: String { String(drop { $0 == " " }) }
    fileprivate var reversedTrim: String { String(String(reversed().drop { $0 == " " }).reversed()) }
}

/// A command-line mistake: exit code 2 and the message.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
