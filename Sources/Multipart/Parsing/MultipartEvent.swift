/// What the parser found next in a body.
public enum MultipartEvent: Equatable, Sendable {
    /// A part begins; its headers are complete.
    case partBegin(PartHead)
    /// Bytes of the current part's content. The slice shares storage with the chunk that
    /// was fed (no copy) except for a few bytes held back at a chunk's end while they
    /// might begin a delimiter.
    case body(ArraySlice<UInt8>)
    /// The current part's content is complete.
    case partEnd
    /// The closing delimiter was read: the form is complete.
    case end
}

/// The headers of a part, with its form-data fields decoded.
public struct PartHead: Equatable, Sendable {
    /// Every header line, in order, names as sent.
    public let headers: [HeaderField]
    /// The `name` of `Content-Disposition: form-data` (browser escapes undone).
    public let name: String
    /// The `filename` (from `filename*` when sent), if any.
    public let filename: String?
    /// The `Content-Type` header's value, if any.
    public let contentType: String?

    /// The value of the first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.equalsIgnoringCase(name) }?.value
    }
}

extension String {
    func equalsIgnoringCase(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
