/// An HTTP request method.
public struct RequestMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method's name, e.g. `POST`.
    public let rawValue: String

    /// Creates a method from its name (uppercased).
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public static let get: RequestMethod = "GET"
    public static let head: RequestMethod = "HEAD"
    public static let post: RequestMethod = "POST"
    public static let put: RequestMethod = "PUT"
    public static let patch: RequestMethod = "PATCH"
    public static let delete: RequestMethod = "DELETE"
    public static let options: RequestMethod = "OPTIONS"

    public var description: String { rawValue }
}
