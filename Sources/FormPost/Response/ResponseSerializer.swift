/// Turns a response into a value, after checking it against its ``validation``.
///
///     let user = try response.serialized(by: .decodable(User.self))
///     let object = try response.serialized(by: .json)            // Any, as JSONSerialization reads it
///     let page = try response.serialized(by: .string)            // charset from Content-Type
public protocol ResponseSerializer: Sendable {
    /// What the serializer produces.
    associatedtype Output

    /// The statuses and content types it accepts.
    var validation: ResponseValidation { get }

    /// The value of a non-empty body.
    ///
    /// - Throws: ``UploadError/decodingFailed(_:body:)`` naming where the body is wrong.
    func decode(_ response: UploadResponse) throws -> Output

    /// The value of an empty body. Serializers that need a body return one only when the
    /// response is empty on purpose (``UploadResponse/isEmptyOnPurpose``) and otherwise throw
    /// ``UploadError/emptyResponse(status:)``.
    func emptyValue(for response: UploadResponse) throws -> Output
}

extension ResponseSerializer {
    /// Validates `response`, then decodes its body (or answers for an empty one).
    public func serialize(_ response: UploadResponse) throws -> Output {
        try validation.validate(response)
        return response.body.isEmpty ? try emptyValue(for: response) : try decode(response)
    }

    /// Throws ``UploadError/emptyResponse(status:)`` unless `response` is empty on purpose.
    package func requireEmptyOnPurpose(_ response: UploadResponse) throws {
        guard response.isEmptyOnPurpose else { throw UploadError.emptyResponse(status: response.status) }
    }
}
