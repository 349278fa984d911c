/// A nested parameter value, flattened into form fields the AFNetworking way.
///
/// - a dictionary's entries become `key[nested]`, keys sorted ascending;
/// - an array's elements become `key[]`, in order;
/// - a set's elements become `key` each (no brackets), sorted by their text;
/// - `null` becomes an empty value; `.bytes` are kept as bytes; numbers and
///   booleans are written as text (`true`/`false`).
///
///     ["user": ["name": "Ann", "age": 7], "tags": ["a", "b"], "x": nil]
///     // tags[]=a, tags[]=b, user[age]=7, user[name]=Ann, x=
public indirect enum FormValue: Equatable, Sendable {
    /// Text, sent as its UTF-8 bytes.
    case string(String)
    /// An integer, sent in decimal: `-7`.
    case integer(Int64)
    /// A number: a whole one below 10¹⁵ sent as an integer (`2.0` as `2`), any other as
    /// Swift writes it (`0.1`, `1e+100`).
    case double(Double)
    /// A boolean, sent as `true` or `false`.
    case bool(Bool)
    /// Bytes, sent as they are.
    case bytes([UInt8])
    /// No value: a field with an empty value.
    case null
    /// Elements in order, each a field named `key[]` (or flattened further below it).
    case array([FormValue])
    /// Elements each named `key`, without brackets, in the order of their text.
    case set([FormValue])
    /// Entries named `key[entry]`, keys sorted ascending; at the top, the keys are the names.
    case dictionary([String: FormValue])

    /// One flattened field: its name and its value's bytes.
    public struct Field: Equatable, Sendable {
        /// The field name, e.g. `user[name]` or `tags[]`.
        public let name: String
        /// The value's bytes (UTF-8 text, or raw bytes).
        public let value: [UInt8]
    }

    /// The fields this value flattens to, in order; a top-level dictionary's keys are the names.
    public func flattened() -> [Field] {
        var fields: [Field] = []
        flatten(key: nil, into: &fields)
        return fields
    }

    private func flatten(key: String?, into fields: inout [Field]) {
        switch self {
        case .dictionary(let entries):
            for entryKey in entries.keys.sorted() {
                let name = key.map { "\($0)[\(entryKey)]" } ?? entryKey
                entries[entryKey]!.flatten(key: name, into: &fields)
            }
        case .array(let elements):
            for element in elements {
                element.flatten(key: key.map { "\($0)[]" } ?? "[]", into: &fields)
            }
        case .set:
            for element in sortedElements {
                element.flatten(key: key, into: &fields)
            }
        default:
            fields.append(Field(name: key ?? "", value: scalarBytes))
        }
    }

    /// The bytes of a scalar value as written in a field.
    var scalarBytes: [UInt8] {
        switch self {
        case .string(let text): return Array(text.utf8)
        case .integer(let number): return Array(String(number).utf8)
        case .double(let number): return Array(Self.text(of: number).utf8)
        case .bool(let flag): return Array((flag ? "true" : "false").utf8)
        case .bytes(let bytes): return bytes
        case .null, .array, .set, .dictionary: return []
        }
    }

    /// A set's elements in their written order: ascending by their flattened text.
    public var sortedElements: [FormValue] {
        guard case .set(let elements) = self else { return [] }
        return elements.map { (element: $0, key: $0.sortKey) }.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.element)
    }

    private var sortKey: [UInt8] {
        switch self {
        case .array, .set, .dictionary:
            return flattened().flatMap { Array($0.name.utf8) + [0x3D] + $0.value + [0x26] }
        default:
            return scalarBytes
        }
    }

    private static func text(of number: Double) -> String {
        if number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
        return String(number)
    }
}

extension FormValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: FormValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, FormValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}
