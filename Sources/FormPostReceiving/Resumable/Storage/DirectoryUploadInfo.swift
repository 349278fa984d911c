/// What an upload kept in the directory (``DirectoryUploads``) saves besides what every
/// store needs (``ResumableUploadInfo``).
protocol DirectoryUploadInfo: ResumableUploadInfo {
    /// While an append whose bytes may yet be undone is written (one with a checksum): the
    /// offset it began at. Its bytes past it count for nothing until it ends — also when the
    /// server stopped meanwhile.
    var verified: Int64? { get set }
    /// Whether the upload is stored once `offset` is the whole of it.
    func completes(at offset: Int64) -> Bool

    /// The upload `id` once what its protocol left undone when a server stopped is done (a
    /// draft form's files moved into the directory). It blocks on the file system; call it
    /// holding the upload.
    func settled(_ id: String, in store: UploadStore) throws -> Self
    /// The bytes of `id` that arrived: the size of its data (a draft form's, what its parse
    /// took); nil when it has no data. It blocks on the file system.
    func dataOffset(of id: String, in store: UploadStore) -> Int64?
}

extension DirectoryUploadInfo {
    /// Itself: nothing is left undone.
    func settled(_ id: String, in store: UploadStore) throws -> Self { self }

    /// The size of its data file.
    func dataOffset(of id: String, in store: UploadStore) -> Int64? { store.dataSize(id) }
}
