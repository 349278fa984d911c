/// An upload as object storage keeps it (``BucketUploads``): its state object, and the
/// ETag it was read with, which the next save must still match.
struct SavedObjectUpload<Info: ResumableUploadInfo>: KeptUpload {
    var state: ObjectUploadState<Info>
    /// The state object's ETag; nil when read without the lease, or once stored (nothing
    /// saves it again).
    var etag: String?

    var info: Info {
        get { state.info }
        set { state.info = newValue }
    }

    var offset: Int64 { state.offset }
}
