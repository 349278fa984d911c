/// A small form collected whole: fields as strings and files as bytes, in the order received.
public struct CollectedForm: Equatable, Sendable {
    /// A part without a filename.
    public struct Field: Equatable, Sendable {
        /// The field name.
        public let name: String
        /// The value, decoded as UTF-8.
        public let value: String
    }

    /// A part with a filename.
    public struct File: Equatable, Sendable {
        /// The field name.
        public let name: String
        /// The filename as sent (never a safe path to write to as it is).
        public let filename: String
        /// The `Content-Type` sent, if any.
        public let contentType: String?
        /// The content.
        public let bytes: [UInt8]
    }

    /// The fields, in order.
    public private(set) var fields: [Field] = []
    /// The files, in order.
    public private(set) var files: [File] = []

    /// The value of the first field named `name`.
    public func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// Parses a whole body with `limits` (a part's and the whole body's size default to 16 MiB here).
    ///
    /// - Throws: every error of ``MultipartParser``.
    public init(body: [UInt8], contentType: String, limits: MultipartParserLimits = MultipartParserLimits(maxPartBytes: 16 << 20, maxTotalBytes: 16 << 20)) throws {
        var parser = try MultipartParser(contentType: contentType, limits: limits)
        parser.append(body)
        var head: PartHead?
        var content: [UInt8] = []
        while let event = try parser.next() {
            switch event {
            case .partBegin(let begun):
                head = begun
                content = []
            case .body(let bytes):
                content += bytes
            case .partEnd:
                guard let part = head else { continue }
                if let filename = part.filename {
                    files.append(File(name: part.name, filename: filename, contentType: part.contentType, bytes: content))
                } else {
                    fields.append(Field(name: part.name, value: String(decoding: content, as: UTF8.self)))
                }
            case .end:
                break
            }
        }
        try parser.finish()
    }
}
