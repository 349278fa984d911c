/// An HTTP request method.
public struct RequestMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method's name, e.g. `POST`.
    public let rawValue: String

    /// Creates a method from its name (uppercased).
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// `GET`: carries no body; parameters go in the URL's query.
    public static let get: RequestMethod = "GET"
    /// `HEAD`: carries no body (parameters go in the query); the answer has none either.
    public static let head: RequestMethod = "HEAD"
    /// `POST`: the method of forms.
    public static let post: RequestMethod = "POST"
    /// `PUT`: a body that replaces the target (`formpost -T`).
    public static let put: RequestMethod = "PUT"
    /// `PATCH`: a body that changes the target (tus appends).
    public static let patch: RequestMethod = "PATCH"
    /// `DELETE`: parameters go in the URL's query (``RequestSerializer/methodsEncodingParametersInURI``).
    public static let delete: RequestMethod = "DELETE"
    /// `OPTIONS`: what a server supports (tus asks it before an upload).
    public static let options: RequestMethod = "OPTIONS"

    public var description: String { rawValue }
}
