#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoder of `Decodable` values from bytes: `JSONDecoder` and `PropertyListDecoder` are ones.
public protocol DataDecoder: Sendable {
    /// Decodes a `T` from `data`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
    /// The content types its documents come as.
    var contentTypes: Set<String> { get }
}

extension JSONDecoder: DataDecoder {
    /// The JSON content types.
    public var contentTypes: Set<String> { DocumentContentTypes.json }
}

extension PropertyListDecoder: DataDecoder {
    /// The property list content types.
    public var contentTypes: Set<String> { DocumentContentTypes.propertyList }
}
