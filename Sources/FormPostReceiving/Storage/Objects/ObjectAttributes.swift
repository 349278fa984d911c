/// What an object is made with, beside its bytes: its media type, and its SHA-256 when
/// known as it is written.
public struct ObjectAttributes: Sendable, Equatable {
    /// Its `Content-Type`, or nil for the store's default.
    public var contentType: String?
    /// Its SHA-256 in hexadecimal (S3: `x-amz-meta-sha256`), or nil.
    public var sha256: String?

    /// Attributes of `contentType` and `sha256`.
    public init(contentType: String? = nil, sha256: String? = nil) {
        self.contentType = contentType
        self.sha256 = sha256
    }
}
