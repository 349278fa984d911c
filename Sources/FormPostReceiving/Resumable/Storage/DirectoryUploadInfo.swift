/// What an upload kept in the directory (``DirectoryUploads``) saves besides what every
/// store needs (``ResumableUploadInfo``).
protocol DirectoryUploadInfo: ResumableUploadInfo {
    /// While an append whose bytes may yet be undone is written (one with a checksum): the
    /// offset it began at. Its bytes past it count for nothing until it ends — also when the
    /// server stopped meanwhile.
    var verified: Int64? { get set }
    /// Whether the upload is stored once `offset` is the whole of it.
    func completes(at offset: Int64) -> Bool
}
