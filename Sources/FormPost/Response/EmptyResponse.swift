/// A `Decodable` type with a value for the empty body of a 204, a 205 or a HEAD request,
/// so ``DecodableResponseSerializer`` can answer one without a document.
public protocol EmptyResponse {
    /// The value of an empty body.
    static func emptyValue() -> Self
}

/// The value of a response that has no body to decode: `serialized(by: .decodable(Empty.self))`.
public struct Empty: Codable, Sendable, Equatable, EmptyResponse {
    /// Creates the empty value.
    public init() {}

    /// The empty value.
    public static func emptyValue() -> Empty { Empty() }
}

extension Optional: EmptyResponse {
    /// nil: an optional decodes an empty body as nothing.
    public static func emptyValue() -> Wrapped? { nil }
}
