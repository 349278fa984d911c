/// An upload as the directory keeps it (``DirectoryUploads``): its state file, and the
/// size of its data that counts.
struct DirectoryUpload<Info: DirectoryUploadInfo>: KeptUpload {
    var info: Info
    var offset: Int64
}
