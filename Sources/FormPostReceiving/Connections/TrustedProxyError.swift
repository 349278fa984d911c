/// A trusted proxy range that cannot be used (``TrustedProxies/init(_:)``).
public enum TrustedProxyError: Error, Equatable, CustomStringConvertible {
    /// The text is neither an IP address nor a CIDR range of one (`10.0.0.0/8`, `2001:db8::/32`).
    case invalidRange(String)

    /// The error as a sentence naming the range.
    public var description: String {
        switch self {
        case .invalidRange(let text):
            "\(text) is not an IP address or a CIDR range such as 10.0.0.0/8 or 2001:db8::/32"
        }
    }
}
