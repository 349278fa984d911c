import FormPost
import Foundation

/// The body as a `PropertyListSerialization` object, XML or binary. An empty body on
/// purpose (204, 205, HEAD) is `NSNull`.
public struct PropertyListResponseSerializer: ResponseSerializer {
    /// The content types a property list serializer accepts by default.
    public static let contentTypes: Set<String> = DocumentContentTypes.propertyList

    public let validation: ResponseValidation

    /// Creates a serializer; by default it accepts 200–299 and `application/x-plist`.
    public init(validation: ResponseValidation = ResponseValidation(contentTypes: Self.contentTypes)) {
        self.validation = validation
    }

    public func decode(_ response: UploadResponse) throws -> Any {
        do {
            return try PropertyListSerialization.propertyList(from: Data(response.body), options: [], format: nil)
        } catch {
            throw UploadError.decodingFailed(FoundationErrorDescription.describe(error), body: response.body)
        }
    }

    public func emptyValue(for response: UploadResponse) throws -> Any {
        try requireEmptyOnPurpose(response)
        return NSNull()
    }
}

extension ResponseSerializer where Self == PropertyListResponseSerializer {
    /// The body as a property list object (200–299, `application/x-plist`).
    public static var propertyList: PropertyListResponseSerializer { PropertyListResponseSerializer() }
}
