/// What `GET` on an incomplete upload answers.
struct DraftUploadState: Codable {
    var complete: Bool
    var length: Int64?
    var offset: Int64
}
