#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ResumableHTTP

/// A server's answer: status, headers and body. Read it with a ``ResponseSerializer``:
///
///     let user = try response.serialized(by: .decodable(User.self))
///
/// or with the shortcuts ``validate(statuses:contentTypes:)``, ``decode(_:using:)`` and ``text``.
public struct UploadResponse: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields, in order, names as received.
    public let headers: HTTPFields
    /// The body.
    public let body: [UInt8]
    /// The URL that answered (after redirects).
    public let url: URL
    /// The method of the request that was answered (HEAD responses have no body).
    public let method: RequestMethod
    /// The HTTP version of the answer as curl's `%{http_version}` writes it (`1.1`, `2`),
    /// or nil where the transport does not say (URLSession).
    public let httpVersion: String?

    /// Creates a response.
    public init(status: Int, headers: HTTPFields, body: [UInt8], url: URL, method: RequestMethod = .get, httpVersion: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.method = method
        self.httpVersion = httpVersion
    }

    /// The value of the fields named `name` (case-insensitive), several joined as HTTP joins
    /// them; nil when there is none. `headers[.location]` says the same for a known name.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }

    /// The `Content-Type` media type without parameters, lowercased (`application/json`), if any.
    public var mediaType: String? {
        guard let type = header("Content-Type")?.split(separator: ";").first?.trimmingOptionalWhitespace().lowercased(), !type.isEmpty else { return nil }
        return type
    }

    /// The `Content-Type` charset parameter, lowercased, if any.
    public var charset: String? {
        guard let contentType = header("Content-Type") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingOptionalWhitespace() }
            if pair.count == 2, pair[0].lowercased() == "charset" { return String(pair[1].drop { $0 == "\"" }.reversed().drop { $0 == "\"" }.reversed()).lowercased() }
        }
        return nil
    }

    /// The first 512 bytes of the body as text, for error messages.
    public var bodyPrefix: String { String(decoding: body.prefix(512), as: UTF8.self) }

    /// Whether an empty body is expected: a 204 or 205 status, or an answer to HEAD.
    public var isEmptyOnPurpose: Bool { status == 204 || status == 205 || method == .head }

    /// The value `serializer` makes of this response, after its validation.
    public func serialized<S: ResponseSerializer>(by serializer: S) throws -> S.Output {
        try serializer.serialize(self)
    }

    /// The body as text in its `Content-Type` charset (UTF-8, then ISO-8859-1, without one);
    /// bytes the charset cannot read are replaced.
    public var text: String {
        (try? StringResponseSerializer(validation: .acceptingAnything).decode(self)) ?? String(decoding: body, as: UTF8.self)
    }

    /// Decodes the body as JSON, whatever the status and content type.
    ///
    /// - Throws: ``UploadError/decodingFailed(_:body:)`` naming the path in the document.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try DecodableResponseSerializer(type, decoder: decoder, validation: .acceptingAnything).serialize(self)
    }

    /// Checks the status (200–299 by default) and, when given, the content type; returns self.
    ///
    /// - Throws: ``UploadError/unacceptableStatus(_:contentType:bodyPrefix:)`` or
    ///   ``UploadError/unacceptableContentType(_:acceptable:status:bodyPrefix:)``.
    @discardableResult
    public func validate(statuses: ClosedRange<Int> = 200...299, contentTypes: [String]? = nil) throws -> UploadResponse {
        try ResponseValidation(statusCodes: statuses, contentTypes: contentTypes.map(Set.init)).validate(self)
        return self
    }

    /// A decoding error as a reason: the path in the document (`$.items[2].id`) and what went wrong.
    package static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return (keys.isEmpty ? "the top level" : "$" + keys) + ": " + context.debugDescription
        }
        switch error {
        case .keyNotFound(let key, let context):
            return path(context) + " (missing key \"\(key.stringValue)\")"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return path(context)
        @unknown default:
            return String(describing: error)
        }
    }
}
