/// What an object is made with, beside its bytes: its media type, and its SHA-256 when
/// known as it is written.
public struct ObjectAttributes: Sendable, Equatable {
    /// Its `Content-Type`, or nil for the store's default.
    public var contentType: String?
    /// Its SHA-256 in hexadecimal (S3: `x-amz-meta-sha256`), or nil.
    public var sha256: String?

    /// Whether a multipart upload begun with these attributes declares a CRC32 of each part
    /// (S3: `x-amz-checksum-algorithm: CRC32`, as AWS's SDKs begin one): each part is then
    /// sent with its CRC32, which the store checks, and the completion names them.
    public var partChecksums: Bool

    /// Attributes of `contentType` and `sha256`; a multipart upload that declares CRC32
    /// checksums of its parts when `partChecksums`.
    public init(contentType: String? = nil, sha256: String? = nil, partChecksums: Bool = false) {
        self.contentType = contentType
        self.sha256 = sha256
        self.partChecksums = partChecksums
    }
}
