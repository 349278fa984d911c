import Foundation
import Multipart

extension FormValue {
    /// The value of a Foundation object graph, as `JSONSerialization` produces and
    /// AFNetworking's parameters take: dictionaries (keys written as text), arrays, sets,
    /// strings, numbers (`NSNumber` booleans stay booleans), `Data`, `NSNull`, and
    /// `FormValue`s themselves.
    ///
    /// - Throws: `EncodingError.invalidValue` for anything else, naming the path to it.
    public init(foundationObject object: Any) throws {
        self = try Self.convert(object, path: [])
    }

    private static func convert(_ object: Any, path: [String]) throws -> FormValue {
        switch object {
        case let value as FormValue:
            return value
        case let text as String:
            return .string(text)
        case let data as Data:
            return .bytes(Array(data))
        case is NSNull:
            return .null
        case let number as NSNumber:
            return scalar(of: number)
        case let dictionary as [AnyHashable: Any]:
            return .dictionary(try dictionary.reduce(into: [:]) { result, entry in
                let key = String(describing: entry.key.base)
                result[key] = try convert(entry.value, path: path + [key])
            })
        case let array as [Any]:
            return .array(try array.enumerated().map { try convert($0.element, path: path + ["\($0.offset)"]) })
        case let set as Set<AnyHashable>:
            return .set(try set.map { try convert($0.base, path: path) })
        case let set as NSSet:
            return .set(try set.allObjects.map { try convert($0, path: path) })
        default:
            let location = path.isEmpty ? "the top level" : path.joined(separator: ".")
            throw EncodingError.invalidValue(object, .init(codingPath: [], debugDescription: "\(type(of: object)) at \(location) is not a parameter value"))
        }
    }

    private static func scalar(of number: NSNumber) -> FormValue {
        switch String(cString: number.objCType) {
        case "c", "B": return .bool(number.boolValue)
        case "f", "d": return .double(number.doubleValue)
        case "Q", "L": return number.uint64Value > UInt64(Int64.max) ? .string(number.stringValue) : .integer(number.int64Value)
        default: return .integer(number.int64Value)
        }
    }
}

extension FormValue {
    /// This value as a `JSONSerialization` object: bytes as base64 text (as `JSONEncoder`
    /// writes `Data`), sets as arrays in their written order, `null` as `NSNull`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a non-finite number.
    public func jsonObject() throws -> Any {
        try foundationObject(propertyList: false, path: [])
    }

    /// This value as a `PropertyListSerialization` object: bytes as `Data`, sets as arrays.
    ///
    /// - Throws: `EncodingError.invalidValue` for `null`, which property lists cannot hold.
    public func propertyListObject() throws -> Any {
        try foundationObject(propertyList: true, path: [])
    }

    private func foundationObject(propertyList: Bool, path: [String]) throws -> Any {
        func invalid(_ reason: String) -> EncodingError {
            EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "\(reason) at \(path.isEmpty ? "the top level" : path.joined(separator: "."))"))
        }
        switch self {
        case .string(let text): return text
        case .integer(let number): return NSNumber(value: number)
        case .bool(let flag): return NSNumber(value: flag)
        case .double(let number):
            guard propertyList || number.isFinite else { throw invalid("\(number) cannot be written in JSON") }
            return NSNumber(value: number)
        case .bytes(let bytes): return propertyList ? Data(bytes) : Data(bytes).base64EncodedString()
        case .null:
            guard !propertyList else { throw invalid("null cannot be written in a property list") }
            return NSNull()
        case .array(let elements):
            return try elements.enumerated().map { try $0.element.foundationObject(propertyList: propertyList, path: path + ["\($0.offset)"]) }
        case .set:
            return try sortedElements.map { try $0.foundationObject(propertyList: propertyList, path: path) }
        case .dictionary(let entries):
            var object: [String: Any] = [:]
            for (key, value) in entries { object[key] = try value.foundationObject(propertyList: propertyList, path: path + [key]) }
            return object
        }
    }
}
