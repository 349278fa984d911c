/// One part of an object store's multipart upload, as sent: its number, the ETag the store
/// answered, its size, and its CRC32 when it was sent with one. Saved in a resumable
/// upload's state (`ObjectUploadState`) as JSON.
public struct ObjectPart: Codable, Equatable, Sendable {
    /// Its number, from 1.
    public var number: Int
    /// Its ETag, as the store answered it.
    public var etag: String
    /// Its size in bytes.
    public var size: Int64
    /// Its CRC32 as S3 writes it (`x-amz-checksum-crc32`: the four bytes, big-endian, in
    /// base64), when it was sent with one (``ObjectAttributes/partChecksums``); the
    /// completion names it.
    public var checksumCRC32: String?

    /// Part `number` of `size` bytes, which the store answered with `etag`, sent with the
    /// CRC32 `checksumCRC32` if any.
    public init(number: Int, etag: String, size: Int64, checksumCRC32: String? = nil) {
        self.number = number
        self.etag = etag
        self.size = size
        self.checksumCRC32 = checksumCRC32
    }
}
