import FormPost
import Foundation

/// The body as a `JSONSerialization` object (`[String: Any]`, `[Any]`, …), as AFNetworking's
/// JSON serializer reads it. An empty body on purpose (204, 205, HEAD) is `NSNull`.
public struct JSONResponseSerializer: ResponseSerializer {
    /// The content types a JSON serializer accepts by default.
    public static let contentTypes: Set<String> = DocumentContentTypes.json

    public let validation: ResponseValidation
    /// How the document is read (fragments allowed, and so on).
    public let readingOptions: JSONSerialization.ReadingOptions

    /// Creates a serializer; by default it accepts 200–299 and the JSON content types.
    public init(readingOptions: JSONSerialization.ReadingOptions = [.fragmentsAllowed], validation: ResponseValidation = ResponseValidation(contentTypes: Self.contentTypes)) {
        self.readingOptions = readingOptions
        self.validation = validation
    }

    public func decode(_ response: UploadResponse) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data(response.body), options: readingOptions)
        } catch {
            throw UploadError.decodingFailed(FoundationErrorDescription.describe(error), body: response.body)
        }
    }

    public func emptyValue(for response: UploadResponse) throws -> Any {
        try requireEmptyOnPurpose(response)
        return NSNull()
    }
}

extension ResponseSerializer where Self == JSONResponseSerializer {
    /// The body as a `JSONSerialization` object (200–299, JSON content types).
    public static var json: JSONResponseSerializer { JSONResponseSerializer() }
}
