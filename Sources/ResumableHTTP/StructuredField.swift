import RawStructuredFieldValues

/// The IETF draft's field values are structured fields (RFC 9651): `Upload-Complete` a
/// Boolean, `Upload-Offset` and `Upload-Length` non-negative Integers, `Upload-Limit` a
/// Dictionary. A value of another shape is ignored, as the draft says (nil here).
package enum StructuredField {
    /// The Boolean item of `value` (`?1`, `?0`), or nil.
    package static func boolean(_ value: String?) -> Bool? {
        guard case .bool(let flag)? = item(value) else { return nil }
        return flag
    }

    /// The non-negative Integer item of `value`, or nil.
    package static func integer(_ value: String?) -> Int64? {
        guard case .integer(let number)? = item(value), number >= 0 else { return nil }
        return Int64(number)
    }

    /// `value` serialised as a Boolean item.
    package static func serialize(_ flag: Bool) -> String { flag ? "?1" : "?0" }

    /// The members of a Dictionary whose values are Integers; nil when `value` is no
    /// Dictionary. Members of other types are left out, and listed in `otherTypes`.
    package static func integerDictionary(_ value: String) -> (integers: [String: Int64], otherTypes: Set<String>)? {
        var parser = StructuredFieldValueParser(Array(value.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else { return nil }
        var integers: [String: Int64] = [:]
        var others: Set<String> = []
        for (key, member) in dictionary {
            if case .item(let item) = member, case .integer(let number) = item.bareItem {
                integers[key] = Int64(number)
            } else {
                others.insert(key)
            }
        }
        return (integers, others)
    }

    private static func item(_ value: String?) -> BareItem? {
        guard let value else { return nil }
        var parser = StructuredFieldValueParser(Array(value.utf8))
        return try? parser.parseItemFieldValue().bareItem
    }
}
