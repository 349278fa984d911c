/// The IETF draft's `Upload-Limit`: what an upload resource accepts. Absent members are nil.
package struct UploadLimits: Equatable, Sendable {
    /// `max-size`: the largest upload.
    package var maxSize: Int64?
    /// `min-size`: the smallest upload offered resumption.
    package var minSize: Int64?
    /// `max-append-size`: the most content of one request.
    package var maxAppendSize: Int64?
    /// `min-append-size`: the least content of one request (but the last, and an empty creation).
    package var minAppendSize: Int64?
    /// `max-age` (`expires` before interop version 7): seconds the resource has left.
    package var maxAge: Int64?

    package init(maxSize: Int64? = nil, minSize: Int64? = nil, maxAppendSize: Int64? = nil, minAppendSize: Int64? = nil, maxAge: Int64? = nil) {
        self.maxSize = maxSize
        self.minSize = minSize
        self.maxAppendSize = maxAppendSize
        self.minAppendSize = minAppendSize
        self.maxAge = maxAge
    }

    /// The limits of an `Upload-Limit` value; nil when it must be ignored: not a
    /// Dictionary, or a known key with a value that is not an Integer. Unknown keys are ignored.
    package init?(field: String) {
        guard let (integers, others) = StructuredField.integerDictionary(field),
              others.isDisjoint(with: Self.knownKeys) else { return nil }
        maxSize = integers["max-size"]
        minSize = integers["min-size"]
        maxAppendSize = integers["max-append-size"]
        minAppendSize = integers["min-append-size"]
        maxAge = integers["max-age"] ?? integers["expires"]
    }

    /// The field value; `max-age` is written `expires` for interop versions before 7.
    /// Without any limit it is `min-size=0`, as the draft asks.
    package func fieldValue(interopVersion: Int? = nil) -> String {
        let ageKey = (interopVersion ?? DraftInterop.current) < 7 ? "expires" : "max-age"
        let members = [("max-size", maxSize), ("min-size", minSize), ("max-append-size", maxAppendSize),
                       ("min-append-size", minAppendSize), (ageKey, maxAge)]
            .compactMap { key, value in value.map { "\(key)=\($0)" } }
        return members.isEmpty ? "min-size=0" : members.joined(separator: ", ")
    }

    private static let knownKeys: Set<String> = ["max-size", "min-size", "max-append-size", "min-append-size", "max-age", "expires"]
}
