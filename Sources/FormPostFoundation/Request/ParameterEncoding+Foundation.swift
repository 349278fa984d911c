import Foundation
import FormPost
import Multipart

extension ParameterEncoding {
    /// `application/json`: dictionaries through `JSONSerialization`, `Encodable` values
    /// through `JSONEncoder` (`options` mapped to its output formatting); keys are sorted
    /// by default so the bytes are reproducible.
    public static func json(options: JSONSerialization.WritingOptions = [.sortedKeys]) -> ParameterEncoding {
        ParameterEncoding(
            contentType: "application/json",
            parameters: { Array(try JSONSerialization.data(withJSONObject: FormValue.dictionary($0).jsonObject(), options: options)) },
            value: { value in
                let encoder = JSONEncoder()
                if options.contains(.sortedKeys) { encoder.outputFormatting.insert(.sortedKeys) }
                if options.contains(.prettyPrinted) { encoder.outputFormatting.insert(.prettyPrinted) }
                if options.contains(.withoutEscapingSlashes) { encoder.outputFormatting.insert(.withoutEscapingSlashes) }
                return Array(try encoder.encode(value))
            }
        )
    }

    /// `application/x-plist`, XML (the default) or binary: dictionaries through
    /// `PropertyListSerialization`, `Encodable` values through `PropertyListEncoder`.
    public static func propertyList(format: PropertyListSerialization.PropertyListFormat = .xml) -> ParameterEncoding {
        ParameterEncoding(
            contentType: "application/x-plist",
            parameters: { parameters in
                let object = try FormValue.dictionary(parameters).propertyListObject()
                return Array(try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0))
            },
            value: { value in
                let encoder = PropertyListEncoder()
                encoder.outputFormat = format
                return Array(try encoder.encode(value))
            }
        )
    }
}
