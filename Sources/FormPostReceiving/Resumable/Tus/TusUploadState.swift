import Multipart

/// What `GET` on a tus upload answers.
struct TusUploadState: Codable {
    /// Nil while the client defers it.
    var length: Int64?
    var offset: Int64
    var complete: Bool
    var receipt: Receipt?
}
