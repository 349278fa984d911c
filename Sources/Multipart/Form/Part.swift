/// One part of a form: its header fields and its content.
public struct Part: Sendable {
    /// The part's header fields, written in this order before its content.
    public let headers: [HeaderField]
    /// The part's content.
    public let body: PartBody
    /// The field name, for error messages.
    let name: String?

    /// Creates a part from header fields and content.
    public init(headers: [HeaderField], body: PartBody) {
        self.headers = headers
        self.body = body
        self.name = Self.fieldName(in: headers)
    }

    /// The header block as written: every header line, then an empty line.
    var headerBlock: [UInt8] {
        var block = [UInt8]()
        for header in headers { block += header.line }
        block += [0x0D, 0x0A]
        return block
    }

    private static func fieldName(in headers: [HeaderField]) -> String? {
        guard let disposition = headers.first(where: { $0.name.lowercased() == "content-disposition" }) else { return nil }
        return ContentDispositionValue(parsing: disposition.value)?.name
    }
}
