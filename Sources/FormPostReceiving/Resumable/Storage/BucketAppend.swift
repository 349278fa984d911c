import FormPostDigests

/// What an append to an upload in object storage sent and does not count yet
/// (``BucketUploads``): parts of its multipart upload, and bytes past them, which no saved
/// state names.
struct BucketAppend<Info: ResumableUploadInfo> {
    /// The append, which holds its buffers of the part budget until it is settled.
    let append: ObjectUploadAppend<Info>
    /// Its parts, and the bytes past them.
    let outcome: ObjectUploadAppend<Info>.Outcome
    /// The upload's running SHA-256 before the append (nil: none covers its bytes).
    let before: SHA256Hasher?
    /// The running SHA-256 with the append's bytes.
    let digest: SHA256Hasher?
}
