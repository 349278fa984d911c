/// One part of a form: its header fields and its content.
public struct Part: Sendable {
    /// The part's header fields, written in this order before its content.
    public let headers: [HeaderField]
    /// The part's content.
    public let body: PartBody
    /// The field name, for error messages.
    let name: String?
    /// The header block as written: every header line, then an empty line. Made once, when
    /// the part is, as every plan of the form writes it.
    let headerBlock: [UInt8]

    /// Creates a part from header fields and content.
    public init(headers: [HeaderField], body: PartBody) {
        self.headers = headers
        self.body = body
        self.name = Self.fieldName(in: headers)
        var block = [UInt8]()
        block.reserveCapacity(headers.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        for header in headers { header.write(to: &block) }
        block += [0x0D, 0x0A]
        self.headerBlock = block
    }

    private static func fieldName(in headers: [HeaderField]) -> String? {
        guard let disposition = headers.first(where: { $0.name.lowercased() == "content-disposition" }) else { return nil }
        return ContentDispositionValue(parsing: disposition.value)?.name
    }
}
