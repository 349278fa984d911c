import HTTPTypes

/// The hops a request went through, as the proxies in front of a server wrote them in its
/// header fields, the client first and the server's peer's own peer last: from `Forwarded`
/// (RFC 7239, its elements' `for=`) or from `X-Forwarded-For`, whichever the server reads.
/// Several field lines of one name are one list, in order. Each entry is read on its own:
/// a malformed one is nil in the chain, so that the walk from the right can stop there and
/// keep what the hops right of it said.
enum ForwardingChain {
    /// The hops of `fields`, from the field `read` names (nil for a malformed entry); nil
    /// when the field is absent.
    static func hops(in fields: HTTPFields, reading read: ForwardedField = .xForwardedFor) -> [ForwardedNode?]? {
        switch read {
        case .forwarded:
            // Each field line on its own: a quote a client left open swallows nothing of a
            // line a proxy added.
            let values = fields[values: .forwarded]
            return values.isEmpty ? nil : values.flatMap { elements(of: $0).map(parseElement) }
        case .xForwardedFor:
            let values = fields[values: .xForwardedFor]
            return values.isEmpty ? nil : parseForwardedFor(values.joined(separator: ","))
        }
    }

    /// The `X-Forwarded-For` list `value`: addresses separated by commas, each nil when it
    /// is malformed or empty.
    static func parseForwardedFor(_ value: String) -> [ForwardedNode?] {
        value.split(separator: ",", omittingEmptySubsequences: false).map { ForwardedNode($0.trimmingOptionalWhitespace) }
    }

    /// The elements of the `Forwarded` value `value`: split at the commas that are not in a
    /// quoted string. After a quote that is never closed, at every comma: what a client
    /// wrote cannot swallow the elements a proxy appended after it.
    static func elements(of value: String) -> [Substring] {
        var elements: [Substring] = []
        var start = value.startIndex, index = value.startIndex
        var quoted = false, escaped = false
        while index < value.endIndex {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if !quoted, character == "," {
                elements.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        if quoted {
            elements += value[start...].split(separator: ",", omittingEmptySubsequences: false)
        } else {
            elements.append(value[start...])
        }
        return elements
    }

    /// One element of `Forwarded` (RFC 7239 §4): `name=value` pairs separated by
    /// semicolons, a value a token or a quoted string. Its node is its `for=`, or
    /// ``ForwardedNode/unnamed`` without one; nil when the element breaks the grammar or a
    /// `for=` is not a node.
    static func parseElement(_ element: Substring) -> ForwardedNode? {
        var node: ForwardedNode?, pairs = 0
        var characters = element
        while true {
            characters = characters.drop { $0 == " " || $0 == "\t" }
            guard let nameEnd = characters.firstIndex(of: "=") else { return nil }
            let name = characters[..<nameEnd]
            guard !name.isEmpty, name.allSatisfy(Self.isTokenCharacter) else { return nil }
            characters = characters[characters.index(after: nameEnd)...]
            let pairValue: Substring
            if characters.first == "\"" {
                var text = "", index = characters.index(after: characters.startIndex), closed = false
                while index < characters.endIndex {
                    let character = characters[index]
                    if character == "\\" {
                        index = characters.index(after: index)
                        guard index < characters.endIndex else { return nil }
                        text.append(characters[index])
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        text.append(character)
                    }
                    index = characters.index(after: index)
                }
                guard closed else { return nil }
                pairValue = Substring(text)
                characters = characters[characters.index(after: index)...]
            } else {
                let end = characters.firstIndex { !Self.isTokenCharacter($0) } ?? characters.endIndex
                pairValue = characters[..<end]
                guard !pairValue.isEmpty else { return nil }
                characters = characters[end...]
            }
            pairs += 1
            if name.lowercased() == "for" {
                guard node == nil, let named = ForwardedNode(pairValue, bracketedIPv6: true) else { return nil }
                node = named
            }
            characters = characters.drop { $0 == " " || $0 == "\t" }
            switch characters.first {
            case nil:
                return node ?? .unnamed
            case ";":
                characters = characters.dropFirst()
            default:
                return nil
            }
        }
    }

    /// RFC 9110's `tchar`.
    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character))
    }
}

extension Substring {
    /// The text without the spaces and tabs around it.
    fileprivate var trimmingOptionalWhitespace: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}

extension HTTPField.Name {
    /// `Forwarded` (RFC 7239).
    fileprivate static let forwarded = Self("Forwarded")!
    /// `X-Forwarded-For`, the older field proxies such as nginx and HAProxy write.
    fileprivate static let xForwardedFor = Self("X-Forwarded-For")!
}
