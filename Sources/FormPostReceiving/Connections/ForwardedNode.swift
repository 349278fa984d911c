import NIOCore

/// One hop of a request's forwarding chain, as a proxy wrote it in `Forwarded`'s `for=`
/// (RFC 7239) or in `X-Forwarded-For`: an IP address, or a node that names none (`unknown`,
/// an obfuscated identifier such as `_hidden`, an element without `for=`).
enum ForwardedNode: Equatable {
    case address(SocketAddress)
    case unnamed

    /// The node `text` writes, nil when it is malformed: an IPv4 address with an optional
    /// `:port`, an IPv6 address bare (as `X-Forwarded-For` often has it) or in brackets with
    /// an optional `:port` (`[2001:db8::1]:4711`), `unknown`, or an identifier beginning
    /// with `_` (RFC 7239 §6.3: ALPHA, DIGIT, `.`, `_`, `-`). With `bracketedIPv6`, as in
    /// `Forwarded`, an IPv6 address must be in brackets.
    init?(_ text: Substring, bracketedIPv6: Bool = false) {
        if text.lowercased() == "unknown" {
            self = .unnamed
            return
        }
        let host: Substring, port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            port = rest.isEmpty ? nil : rest.dropFirst()
            guard host.contains(":") else { return nil }
        } else if text.filter({ $0 == ":" }).count == 1 {
            let colon = text.firstIndex(of: ":") ?? text.endIndex
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        } else {
            guard !bracketedIPv6 || !text.contains(":") else { return nil }
            host = text
            port = nil
        }
        if let port, !Self.isPort(port) { return nil }
        if host.hasPrefix("_") {
            guard host.count > 1, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else { return nil }
            self = .unnamed
            return
        }
        // inet_pton accepts neither spaces nor zone identifiers; a port is not an address's part.
        guard host.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == ":") }), !host.isEmpty,
              let address = try? SocketAddress(ipAddress: String(host), port: 0) else { return nil }
        self = .address(address)
    }

    /// A port: 1 to 5 digits, or an obfuscated one (`_` and RFC 7239's characters).
    private static func isPort(_ text: Substring) -> Bool {
        if text.hasPrefix("_") { return text.count > 1 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) } }
        return (1...5).contains(text.count) && text.allSatisfy { $0.isASCII && $0.isNumber } && Int(text).map { $0 <= 65_535 } == true
    }
}
