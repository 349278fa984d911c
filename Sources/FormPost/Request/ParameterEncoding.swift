import Foundation
import Multipart

/// How parameters become a request body (for methods that do not put them in the URL).
///
///     ["q": "swift", "page": 2]
///     .urlEncoded     → page=2&q=swift                         (application/x-www-form-urlencoded)
///     .json()         → {"page":2,"q":"swift"}                 (application/json)
///     .propertyList() → <?xml …?><plist version="1.0"><dict>…   (application/x-plist)
public enum ParameterEncoding: Sendable, Equatable {
    /// `application/x-www-form-urlencoded`, as ``URLEncodedForm`` writes it.
    case urlEncoded
    /// `application/json`: dictionaries through `JSONSerialization`, `Encodable` values
    /// through `JSONEncoder`; keys are sorted by default so the bytes are reproducible.
    case json(options: JSONSerialization.WritingOptions = [.sortedKeys])
    /// `application/x-plist`, XML (the default) or binary.
    case propertyList(format: PropertyListSerialization.PropertyListFormat = .xml)

    /// The `Content-Type` of bodies written this way.
    public var contentType: String {
        switch self {
        case .urlEncoded: return "application/x-www-form-urlencoded"
        case .json: return "application/json"
        case .propertyList: return "application/x-plist"
        }
    }

    /// The body bytes of `parameters`.
    ///
    /// - Throws: ``UploadError/invalidParameters(_:)`` for values the format cannot hold
    ///   (a non-finite number in JSON, `null` in a property list).
    public func encode(_ parameters: [String: FormValue]) throws -> [UInt8] {
        do {
            switch self {
            case .urlEncoded:
                return Array(URLEncodedForm.encode(parameters).utf8)
            case .json(let options):
                return Array(try JSONSerialization.data(withJSONObject: FormValue.dictionary(parameters).jsonObject(), options: options))
            case .propertyList(let format):
                let object = try FormValue.dictionary(parameters).propertyListObject()
                return Array(try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0))
            }
        } catch {
            throw UploadError.invalidParameters(Self.reason(error))
        }
    }

    /// The body bytes of an `Encodable` value: through ``Multipart/FormValueEncoder`` for
    /// `.urlEncoded`, `JSONEncoder` for `.json` (its options mapped to output formatting),
    /// `PropertyListEncoder` for `.propertyList`.
    public func encode(_ value: some Encodable) throws -> [UInt8] {
        do {
            switch self {
            case .urlEncoded:
                return Array(URLEncodedForm.encode(try Self.parameters(of: value)).utf8)
            case .json(let options):
                let encoder = JSONEncoder()
                if options.contains(.sortedKeys) { encoder.outputFormatting.insert(.sortedKeys) }
                if options.contains(.prettyPrinted) { encoder.outputFormatting.insert(.prettyPrinted) }
                if options.contains(.withoutEscapingSlashes) { encoder.outputFormatting.insert(.withoutEscapingSlashes) }
                return Array(try encoder.encode(value))
            case .propertyList(let format):
                let encoder = PropertyListEncoder()
                encoder.outputFormat = format
                return Array(try encoder.encode(value))
            }
        } catch let error as UploadError {
            throw error
        } catch {
            throw UploadError.invalidParameters(Self.reason(error))
        }
    }

    /// The parameters an `Encodable` value flattens to; it must encode to a keyed container.
    static func parameters(of value: some Encodable) throws -> [String: FormValue] {
        guard case .dictionary(let parameters) = try FormValueEncoder().encode(value) else {
            throw UploadError.invalidParameters("\(type(of: value)) must encode to a keyed container to become parameters")
        }
        return parameters
    }

    private static func reason(_ error: any Error) -> String {
        if case .invalidValue(_, let context) = error as? EncodingError { return context.debugDescription }
        return String(describing: error)
    }
}
