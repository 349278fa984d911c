/// What a receiver answers for a stored form: its fields and files, in the order received.
///
///     {"fields":[{"name":"title","value":"Hi"}],
///      "files":[{"name":"doc","filename":"a.pdf","contentType":"application/pdf",
///                "size":4,"sha256":"…","storedAs":"3f0c…"}]}
public struct Receipt: Codable, Equatable, Sendable {
    /// A text field.
    public struct Field: Codable, Equatable, Sendable {
        /// The field name.
        public let name: String
        /// The value, as UTF-8 text.
        public let value: String

        /// Creates a field entry.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A stored file.
    public struct File: Codable, Equatable, Sendable {
        /// The field name.
        public let name: String
        /// The filename the client sent (never used to build a path).
        public let filename: String
        /// The content type the client sent, if any.
        public let contentType: String?
        /// The content's size in bytes.
        public let size: Int64
        /// The content's SHA-256, lowercase hexadecimal.
        public let sha256: String
        /// The stored file's name, relative to the receiver's directory; in object storage,
        /// its key in ``bucket``.
        public let storedAs: String
        /// The bucket of object storage the file is in; nil (and absent from the JSON) for a
        /// file of the receiver's directory.
        public let bucket: String?

        /// Creates a file entry.
        public init(name: String, filename: String, contentType: String?, size: Int64, sha256: String, storedAs: String, bucket: String? = nil) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.size = size
            self.sha256 = sha256
            self.storedAs = storedAs
            self.bucket = bucket
        }
    }

    /// The text fields.
    public var fields: [Field] = []
    /// The stored files.
    public var files: [File] = []

    /// Creates a receipt.
    public init(fields: [Field] = [], files: [File] = []) {
        self.fields = fields
        self.files = files
    }
}
