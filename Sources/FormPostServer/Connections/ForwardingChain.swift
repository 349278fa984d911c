import HTTPTypes

/// The hops a request went through, as the proxies in front of a server wrote them in its
/// header fields, the client first and the server's peer's own peer last: from `Forwarded`
/// (RFC 7239, its elements' `for=`), or when there is none from `X-Forwarded-For`. Several
/// field lines of one name are one list, in order.
enum ForwardingChain {
    /// The hops of `fields`, from the field(s) `read` names: nil when none of them is
    /// present, or when the one used is malformed (then nothing of it can be relied upon).
    static func hops(in fields: HTTPFields, reading read: ForwardedField = .either) -> [ForwardedNode]? {
        let forwarded = read == .xForwardedFor ? [] : fields[values: .forwarded]
        if !forwarded.isEmpty { return parseForwarded(forwarded.joined(separator: ",")) }
        let forwardedFor = read == .forwarded ? [] : fields[values: .xForwardedFor]
        if !forwardedFor.isEmpty { return parseForwardedFor(forwardedFor.joined(separator: ",")) }
        return nil
    }

    /// The `X-Forwarded-For` list `value`: addresses separated by commas; nil when one is
    /// malformed or empty.
    static func parseForwardedFor(_ value: String) -> [ForwardedNode]? {
        var nodes: [ForwardedNode] = []
        for entry in value.split(separator: ",", omittingEmptySubsequences: false) {
            guard let node = ForwardedNode(entry.trimmingOptionalWhitespace) else { return nil }
            nodes.append(node)
        }
        return nodes
    }

    /// The `Forwarded` value `value` (RFC 7239 §4): elements separated by commas, each
    /// `name=value` pairs separated by semicolons, a value a token or a quoted string. An
    /// element's node is its `for=`, or ``ForwardedNode/unnamed`` without one; nil when the
    /// value breaks the grammar or a `for=` is not a node.
    static func parseForwarded(_ value: String) -> [ForwardedNode]? {
        var nodes: [ForwardedNode] = []
        var element: ForwardedNode?, pairs = 0
        var characters = Substring(value)[...]
        func endElement() -> Bool {
            guard pairs > 0 else { return false }
            nodes.append(element ?? .unnamed)
            element = nil
            pairs = 0
            return true
        }
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
                guard element == nil, let node = ForwardedNode(pairValue, bracketedIPv6: true) else { return nil }
                element = node
            }
            characters = characters.drop { $0 == " " || $0 == "\t" }
            switch characters.first {
            case nil:
                return endElement() ? nodes : nil
            case ";":
                characters = characters.dropFirst()
            case ",":
                guard endElement() else { return nil }
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
