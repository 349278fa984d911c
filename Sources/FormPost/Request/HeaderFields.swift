/// Header fields as this package keeps them: `(name, value)` pairs in order.
extension Array where Element == (name: String, value: String) {
    /// The value of the first field named `name` (case-insensitive).
    func value(of name: String) -> String? {
        let lowered = name.lowercased()
        return first { $0.name.lowercased() == lowered }?.value
    }

    /// Replaces every field named `name` (case-insensitive) with one field at the first one's place,
    /// or appends it; nil removes them all.
    mutating func setField(_ name: String, to value: String?) {
        let lowered = name.lowercased()
        let index = firstIndex { $0.name.lowercased() == lowered }
        removeAll { $0.name.lowercased() == lowered }
        guard let value else { return }
        insert((name, value), at: Swift.min(index ?? count, count))
    }
}
