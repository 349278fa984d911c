import FormPost
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An `XMLParser` over the body, not yet parsed, as AFNetworking's XML parser serializer
/// gives: set a delegate and call `parse()`. External entities are not resolved.
/// An empty body on purpose (204, 205, HEAD) gives a parser over no bytes.
public struct XMLParserResponseSerializer: ResponseSerializer {
    /// The content types an XML serializer accepts by default.
    public static let contentTypes: Set<String> = ["application/xml", "text/xml"]

    public let validation: ResponseValidation

    /// Creates a serializer; by default it accepts 200–299 and the XML content types.
    public init(validation: ResponseValidation = ResponseValidation(contentTypes: Self.contentTypes)) {
        self.validation = validation
    }

    public func decode(_ response: UploadResponse) throws -> XMLParser {
        let parser = XMLParser(data: Data(response.body))
        parser.shouldResolveExternalEntities = false
        return parser
    }

    public func emptyValue(for response: UploadResponse) throws -> XMLParser {
        try requireEmptyOnPurpose(response)
        return try decode(response)
    }
}

extension ResponseSerializer where Self == XMLParserResponseSerializer {
    /// An unparsed `XMLParser` over the body (200–299, XML content types).
    public static var xmlParser: XMLParserResponseSerializer { XMLParserResponseSerializer() }
}
