#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes any `Encodable` value into a ``FormValue`` tree, for ``MultipartForm/append(encodable:)``.
///
/// `Data` becomes `.bytes` (kept as raw bytes), `Date` an ISO 8601 string, `URL` its
/// absolute string, optionals that are nil are left out, and explicit nils become `.null`.
public struct FormValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// The ``FormValue`` that `value` encodes to.
    public func encode(_ value: some Encodable) throws -> FormValue {
        let node = FormValueNode()
        try node.encodeValue(value, codingPath: [])
        return node.value
    }
}

/// A node of the tree being encoded; containers fill it in place.
final class FormValueNode {
    enum Content {
        case empty
        case scalar(FormValue)
        case keyed([(String, FormValueNode)])
        case unkeyed([FormValueNode])
    }

    var content: Content = .empty

    var value: FormValue {
        switch content {
        case .empty: return .dictionary([:])
        case .scalar(let scalar): return scalar
        case .keyed(let entries):
            return .dictionary(Dictionary(entries.map { ($0.0, $0.1.value) }, uniquingKeysWith: { _, last in last }))
        case .unkeyed(let elements): return .array(elements.map(\.value))
        }
    }

    func encodeValue(_ value: some Encodable, codingPath: [any CodingKey]) throws {
        switch value {
        case let data as Data: content = .scalar(.bytes(Array(data)))
        case let bytes as [UInt8] where type(of: value) == [UInt8].self: content = .scalar(.bytes(bytes))
        case let date as Date: content = .scalar(.string(date.ISO8601Format()))
        case let url as URL: content = .scalar(.string(url.absoluteString))
        case let decimal as Decimal: content = .scalar(.string(decimal.description))
        default: try value.encode(to: FormValueEncoding(node: self, codingPath: codingPath))
        }
    }

    func keyedChild(_ key: String) -> FormValueNode {
        var entries: [(String, FormValueNode)] = []
        if case .keyed(let existing) = content { entries = existing }
        if let found = entries.first(where: { $0.0 == key }) { return found.1 }
        let child = FormValueNode()
        entries.append((key, child))
        content = .keyed(entries)
        return child
    }

    func appendedChild() -> FormValueNode {
        var elements: [FormValueNode] = []
        if case .unkeyed(let existing) = content { elements = existing }
        let child = FormValueNode()
        elements.append(child)
        content = .unkeyed(elements)
        return child
    }

    var count: Int {
        if case .unkeyed(let elements) = content { return elements.count }
        return 0
    }
}

struct FormValueEncoding: Encoder {
    let node: FormValueNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.content {} else { node.content = .keyed([]) }
        return KeyedEncodingContainer(KeyedFormValueContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.content {} else { node.content = .unkeyed([]) }
        return UnkeyedFormValueContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleFormValueContainer(node: node, codingPath: codingPath)
    }
}

struct KeyedFormValueContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: FormValueNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.keyedChild(key.stringValue).content = .scalar(.null) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try node.keyedChild(key.stringValue).encodeValue(value, codingPath: codingPath + [key])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        FormValueEncoding(node: node.keyedChild(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        FormValueEncoding(node: node.keyedChild(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder {
        FormValueEncoding(node: node.keyedChild("super"), codingPath: codingPath)
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        FormValueEncoding(node: node.keyedChild(key.stringValue), codingPath: codingPath + [key])
    }
}

struct UnkeyedFormValueContainer: UnkeyedEncodingContainer {
    let node: FormValueNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.appendedChild().content = .scalar(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try node.appendedChild().encodeValue(value, codingPath: codingPath)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        FormValueEncoding(node: node.appendedChild(), codingPath: codingPath).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        FormValueEncoding(node: node.appendedChild(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder {
        FormValueEncoding(node: node.appendedChild(), codingPath: codingPath)
    }
}

struct SingleFormValueContainer: SingleValueEncodingContainer {
    let node: FormValueNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .scalar(.null) }
    mutating func encode(_ value: Bool) throws { node.content = .scalar(.bool(value)) }
    mutating func encode(_ value: String) throws { node.content = .scalar(.string(value)) }
    mutating func encode(_ value: Double) throws { node.content = .scalar(.double(value)) }
    mutating func encode(_ value: Float) throws { node.content = .scalar(.string(value.description)) }
    mutating func encode(_ value: Int) throws { node.content = .scalar(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.content = .scalar(.integer(value)) }
    mutating func encode(_ value: UInt64) throws { node.content = .scalar(.string(String(value))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        switch value {
        case let number as any BinaryInteger: node.content = .scalar(.string(String(describing: number)))
        default: try node.encodeValue(value, codingPath: codingPath)
        }
    }
}
