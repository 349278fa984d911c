#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// How parameters become a request body (for methods that do not put them in the URL).
///
///     ["q": "swift", "page": 2]
///     .urlEncoded     → page=2&q=swift                         (application/x-www-form-urlencoded)
///     .json()         → {"page":2,"q":"swift"}                 (application/json; FormPostFoundation)
///     .propertyList() → <?xml …?><plist version="1.0"><dict>…   (application/x-plist; FormPostFoundation)
///
/// `.json(options:)` and `.propertyList(format:)` write through `JSONSerialization` and
/// `PropertyListSerialization`, which need all of Foundation: they come with
/// `import FormPostFoundation`. Any other format is an encoding made with
/// ``init(contentType:parameters:value:)``.
public struct ParameterEncoding: Sendable {
    /// The `Content-Type` of bodies written this way.
    public let contentType: String
    private let encodeParameters: @Sendable ([String: FormValue]) throws -> [UInt8]
    private let encodeValue: @Sendable (any Encodable) throws -> [UInt8]

    /// An encoding of parameters, and of `Encodable` values, as bodies of `contentType`.
    /// An error either closure throws becomes ``UploadError/invalidParameters(_:)``.
    public init(
        contentType: String,
        parameters: @escaping @Sendable ([String: FormValue]) throws -> [UInt8],
        value: @escaping @Sendable (any Encodable) throws -> [UInt8]
    ) {
        self.contentType = contentType
        self.encodeParameters = parameters
        self.encodeValue = value
    }

    /// `application/x-www-form-urlencoded`, as ``URLEncodedForm`` writes it; an `Encodable`
    /// value through `FormValueEncoder`.
    public static let urlEncoded = ParameterEncoding(
        contentType: "application/x-www-form-urlencoded",
        parameters: { Array(URLEncodedForm.encode($0).utf8) },
        value: { Array(URLEncodedForm.encode(try ParameterEncoding.parameters(of: $0)).utf8) }
    )

    /// The body bytes of `parameters`.
    ///
    /// - Throws: ``UploadError/invalidParameters(_:)`` for values the format cannot hold
    ///   (a non-finite number in JSON, `null` in a property list).
    public func encode(_ parameters: [String: FormValue]) throws -> [UInt8] {
        try Self.reporting { try encodeParameters(parameters) }
    }

    /// The body bytes of an `Encodable` value.
    ///
    /// - Throws: ``UploadError/invalidParameters(_:)`` when the format cannot hold it.
    public func encode(_ value: some Encodable) throws -> [UInt8] {
        try Self.reporting { try encodeValue(value) }
    }

    /// The parameters an `Encodable` value flattens to; it must encode to a keyed container.
    package static func parameters(of value: some Encodable) throws -> [String: FormValue] {
        guard case .dictionary(let parameters) = try FormValueEncoder().encode(value) else {
            throw UploadError.invalidParameters("\(type(of: value)) must encode to a keyed container to become parameters")
        }
        return parameters
    }

    private static func reporting(_ encode: () throws -> [UInt8]) throws -> [UInt8] {
        do {
            return try encode()
        } catch let error as UploadError {
            throw error
        } catch {
            if case .invalidValue(_, let context) = error as? EncodingError {
                throw UploadError.invalidParameters(context.debugDescription)
            }
            throw UploadError.invalidParameters(String(describing: error))
        }
    }
}
