/// Picks, by the response's content type, the first of several serializers that accepts
/// it, as AFNetworking's compound serializer does; its value comes back as `Any`.
///
///     let value = try response.serialized(by: .compound([JSONResponseSerializer(), PropertyListResponseSerializer(), XMLDocumentResponseSerializer()]))
///     // [String: Any] for application/json, an XMLDocument for text/xml, …
public struct CompoundResponseSerializer: ResponseSerializer {
    /// The serializers, in the order they are tried.
    public let serializers: [any ResponseSerializer]

    /// Creates a compound of `serializers`.
    public init(_ serializers: [any ResponseSerializer]) {
        self.serializers = serializers
    }

    /// Acceptable: the union of the serializers' statuses and content types.
    public var validation: ResponseValidation {
        var union = ResponseValidation(statusCodes: serializers.flatMap(\.validation.acceptableStatusCodes), contentTypes: [])
        for serializer in serializers {
            guard let types = serializer.validation.acceptableContentTypes else {
                union.acceptableContentTypes = nil
                break
            }
            union.acceptableContentTypes?.formUnion(types)
        }
        return union
    }

    public func decode(_ response: UploadResponse) throws -> Any {
        try Self.open(chosen(for: response), response)
    }

    public func emptyValue(for response: UploadResponse) throws -> Any {
        try Self.open(chosen(for: response), response)
    }

    /// The first serializer whose validation passes; the compound's own validation has
    /// already refused responses that none of them accepts.
    private func chosen(for response: UploadResponse) throws -> any ResponseSerializer {
        var firstError: (any Error)?
        for serializer in serializers {
            do {
                try serializer.validation.validate(response)
                return serializer
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? UploadError.emptyResponse(status: response.status)
    }

    private static func open<S: ResponseSerializer>(_ serializer: S, _ response: UploadResponse) throws -> Any {
        try serializer.serialize(response)
    }
}

extension ResponseSerializer where Self == CompoundResponseSerializer {
    /// The first of `serializers` that accepts the response's content type.
    public static func compound(_ serializers: [any ResponseSerializer]) -> CompoundResponseSerializer {
        CompoundResponseSerializer(serializers)
    }
}
