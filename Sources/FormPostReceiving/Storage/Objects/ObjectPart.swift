/// One part of an object store's multipart upload, as sent: its number, the ETag the store
/// answered, and its size. Saved in a resumable upload's state (`ObjectUploadState`) as JSON.
public struct ObjectPart: Codable, Equatable, Sendable {
    /// Its number, from 1.
    public var number: Int
    /// Its ETag, as the store answered it.
    public var etag: String
    /// Its size in bytes.
    public var size: Int64

    /// Part `number` of `size` bytes, which the store answered with `etag`.
    public init(number: Int, etag: String, size: Int64) {
        self.number = number
        self.etag = etag
        self.size = size
    }
}
