#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The body decoded as a `Decodable` value, by `JSONDecoder` unless told otherwise.
/// A failure names the path in the document and keeps the raw body; an empty body on
/// purpose decodes as ``EmptyResponse/emptyValue()`` when `T` has one (``Empty``, optionals).
public struct DecodableResponseSerializer<T: Decodable>: ResponseSerializer {
    public let validation: ResponseValidation
    /// The decoder.
    public let decoder: any DataDecoder

    /// Creates a serializer; by default it accepts 200–299 and the decoder's content types.
    public init(_ type: T.Type = T.self, decoder: any DataDecoder = JSONDecoder(), validation: ResponseValidation? = nil) {
        self.decoder = decoder
        self.validation = validation ?? ResponseValidation(contentTypes: decoder.contentTypes)
    }

    public func decode(_ response: UploadResponse) throws -> T {
        do {
            return try decoder.decode(T.self, from: Data(response.body))
        } catch {
            throw UploadError.decodingFailed(UploadResponse.describe(error), body: response.body)
        }
    }

    public func emptyValue(for response: UploadResponse) throws -> T {
        try requireEmptyOnPurpose(response)
        guard let empty = T.self as? any EmptyResponse.Type, let value = empty.emptyValue() as? T else {
            throw UploadError.emptyResponse(status: response.status)
        }
        return value
    }
}

extension ResponseSerializer {
    /// `T` decoded from the body by `decoder` (200–299, the decoder's content types).
    public static func decodable<T: Decodable>(_ type: T.Type, decoder: any DataDecoder = JSONDecoder()) -> Self where Self == DecodableResponseSerializer<T> {
        DecodableResponseSerializer(type, decoder: decoder)
    }
}
