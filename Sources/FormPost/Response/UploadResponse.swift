import Foundation

/// A server's answer: status, headers and body.
public struct UploadResponse: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields, in order, names as received.
    public let headers: [(name: String, value: String)]
    /// The body.
    public let body: [UInt8]
    /// The URL that answered (after redirects).
    public let url: URL

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8], url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as text, decoded with the `Content-Type` charset (UTF-8 by default).
    public var text: String {
        let charset = header("Content-Type").flatMap(Self.charset(of:)) ?? "utf-8"
        if ["iso-8859-1", "latin1", "us-ascii"].contains(charset) {
            return String(body.map { Character(Unicode.Scalar($0)) })
        }
        return String(decoding: body, as: UTF8.self)
    }

    /// Decodes the body as JSON.
    ///
    /// - Throws: ``UploadError/decodingFailed(_:body:)`` naming the path in the document.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        do {
            return try decoder.decode(type, from: Data(body))
        } catch let error as DecodingError {
            throw UploadError.decodingFailed(Self.describe(error), body: body)
        }
    }

    /// Checks the status (200–299 by default) and, when given, the content type; returns self.
    ///
    /// - Throws: ``UploadError/unacceptableStatus(_:contentType:bodyPrefix:)`` or
    ///   ``UploadError/unacceptableContentType(_:acceptable:)``.
    @discardableResult
    public func validate(statuses: ClosedRange<Int> = 200...299, contentTypes: [String]? = nil) throws -> UploadResponse {
        guard statuses.contains(status) else {
            throw UploadError.unacceptableStatus(status, contentType: header("Content-Type"), bodyPrefix: String(decoding: body.prefix(512), as: UTF8.self))
        }
        if let contentTypes {
            let type = header("Content-Type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            let matches = contentTypes.contains { acceptable in
                let pattern = acceptable.lowercased()
                if pattern.hasSuffix("/*") { return type.hasPrefix(String(pattern.dropLast())) }
                return pattern == type || pattern == "*/*"
            }
            guard matches else { throw UploadError.unacceptableContentType(type, acceptable: contentTypes) }
        }
        return self
    }

    static func charset(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "charset" { return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased() }
        }
        return nil
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return (keys.isEmpty ? "the top level" : "$" + keys) + ": " + context.debugDescription
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            if case .keyNotFound(let key, _) = error { return path(context) + " (missing key \"\(key.stringValue)\")" }
            return path(context)
        @unknown default:
            return String(describing: error)
        }
    }
}
