import FormPost
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

#if os(macOS) || canImport(FoundationXML)
/// The body as an `XMLDocument` (FoundationXML on Linux), checked with `XMLParser` first so
/// a malformed document is an error naming its line and column. External entities are
/// never loaded. An empty body on purpose (204, 205, HEAD) is an empty document.
///
/// `XMLDocument` exists on macOS and Linux only; on iOS, tvOS and watchOS use
/// ``XMLParserResponseSerializer``.
public struct XMLDocumentResponseSerializer: ResponseSerializer {
    public let validation: ResponseValidation

    /// Creates a serializer; by default it accepts 200–299 and the XML content types.
    public init(validation: ResponseValidation = ResponseValidation(contentTypes: XMLParserResponseSerializer.contentTypes)) {
        self.validation = validation
    }

    public func decode(_ response: UploadResponse) throws -> XMLDocument {
        let data = Data(response.body)
        if let problem = XMLWellFormedness.problem(in: data) {
            throw UploadError.decodingFailed(problem, body: response.body)
        }
        do {
            return try XMLDocument(data: data, options: [.nodeLoadExternalEntitiesNever])
        } catch {
            throw UploadError.decodingFailed(FoundationErrorDescription.describe(error), body: response.body)
        }
    }

    public func emptyValue(for response: UploadResponse) throws -> XMLDocument {
        try requireEmptyOnPurpose(response)
        return XMLDocument()
    }
}

extension ResponseSerializer where Self == XMLDocumentResponseSerializer {
    /// The body as an `XMLDocument` (200–299, XML content types).
    public static var xmlDocument: XMLDocumentResponseSerializer { XMLDocumentResponseSerializer() }
}
#endif
