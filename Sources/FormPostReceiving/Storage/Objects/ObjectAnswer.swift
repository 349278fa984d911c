import NIOCore

/// An ``ObjectStore``'s answer to a write or a read: its status, the object's ETag, and
/// the bytes read (empty for a write).
public struct ObjectAnswer: Sendable {
    /// The store's status (2xx).
    public let status: Int
    /// The object's `ETag`, as the store answered it, or nil when it sent none.
    public let etag: String?
    /// What was read of the object.
    public let bytes: ByteBuffer

    /// An answer of `status` with `etag` and `bytes`.
    public init(status: Int, etag: String?, bytes: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.etag = etag
        self.bytes = bytes
    }
}
