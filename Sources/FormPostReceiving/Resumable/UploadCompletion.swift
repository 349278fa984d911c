/// A resumable upload's completion, decided before anything of it is stored: the name its
/// data is stored under in the receiver's directory, and the data's SHA-256. It is saved
/// in the upload's state before the data is linked there, so that a completion taken up
/// again — after a failed step, or a server killed meanwhile — stores the same file under
/// the same name, and answers the same receipt.
struct UploadCompletion: Codable, Equatable, Sendable {
    /// The stored file's name in the receiver's directory.
    var storedAs: String
    /// The data's SHA-256, in hexadecimal.
    var sha256: String
    /// The ``UploadEvent/id`` of the upload's `post-finish` event, so that a completion taken
    /// up again records the same event (nil in states saved before events were recorded).
    var event: String?
}
