/// Which responses are acceptable: status codes (200–299 by default) and, when given,
/// content types (`type/subtype`, `type/*` or `*/*`). Every ``ResponseSerializer`` checks
/// its validation before it reads the body.
public struct ResponseValidation: Sendable, Equatable {
    /// The acceptable status codes.
    public var acceptableStatusCodes: Set<Int>
    /// The acceptable media types, lowercased; nil accepts any.
    public var acceptableContentTypes: Set<String>?

    /// Creates a validation.
    public init(statusCodes: some Sequence<Int> = 200...299, contentTypes: Set<String>? = nil) {
        acceptableStatusCodes = Set(statusCodes)
        acceptableContentTypes = contentTypes.map { Set($0.map { $0.lowercased() }) }
    }

    /// Accepts any status and any content type.
    public static let acceptingAnything = ResponseValidation(statusCodes: 100...999)

    /// Checks `response`. The content type is checked only when the body is not empty
    /// (a 204 has none); a body without a content type is refused when types are required.
    ///
    /// - Throws: ``UploadError/unacceptableStatus(_:contentType:bodyPrefix:)`` or
    ///   ``UploadError/unacceptableContentType(_:acceptable:status:bodyPrefix:)``.
    public func validate(_ response: UploadResponse) throws {
        guard acceptableStatusCodes.contains(response.status) else {
            throw UploadError.unacceptableStatus(response.status, contentType: response.header("Content-Type"), bodyPrefix: response.bodyPrefix)
        }
        guard let acceptableContentTypes, !response.body.isEmpty else { return }
        guard let type = response.mediaType, accepts(type) else {
            throw UploadError.unacceptableContentType(response.mediaType, acceptable: acceptableContentTypes.sorted(), status: response.status, bodyPrefix: response.bodyPrefix)
        }
    }

    /// Whether `mediaType` (lowercased `type/subtype`) is among the acceptable content types.
    public func accepts(_ mediaType: String) -> Bool {
        guard let acceptableContentTypes else { return true }
        return acceptableContentTypes.contains { pattern in
            if pattern == "*/*" || pattern == mediaType { return true }
            return pattern.hasSuffix("/*") && mediaType.hasPrefix(pattern.dropLast())
        }
    }
}
