/// When the files of a plain multipart upload (``UploadReceiver``) are on the disk,
/// relative to the receipt that names them. Resumable uploads are always synced before an
/// offset or a receipt is answered, whatever this says.
public enum ReceiptDurability: String, Sendable, CaseIterable, Equatable {
    /// Each stored file is synced to the disk (`fdatasync`; `F_FULLFSYNC` on Apple
    /// platforms) before it is renamed into place, and the directory once after the
    /// request's last file: a receipt names only files that survive a power loss.
    case synced
    /// Files are stored in the page cache and written to the disk when the kernel chooses
    /// (on Linux within about 30 s): a receipt survives the server's crash or kill, but a
    /// power loss or a crash of the machine itself may lose files it named.
    case pageCache = "page-cache"
}
