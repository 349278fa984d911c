/// One part of an S3 multipart upload, as sent: its number, the ETag the store answered,
/// and its size. Saved in a resumable upload's state (``ObjectUploadState``) as JSON.
struct S3Part: Codable, Equatable, Sendable {
    var number: Int
    var etag: String
    var size: Int64
}
