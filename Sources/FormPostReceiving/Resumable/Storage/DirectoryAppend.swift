import FormPostDigests

/// What an append to an upload in the directory wrote and does not count yet
/// (``DirectoryUploads``): its bytes are in the upload's data file already.
struct DirectoryAppend {
    /// The upload's running SHA-256 before the append (nil: none covers its bytes).
    let before: SHA256Hasher?
    /// The running SHA-256 with the append's bytes.
    let digest: SHA256Hasher?
    /// Whether its bytes count only once kept (an append with a checksum).
    let verifying: Bool
}
