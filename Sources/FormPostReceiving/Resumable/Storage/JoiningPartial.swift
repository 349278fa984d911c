/// A partial upload being joined into a final upload (``UploadJoining``): its ID, as its
/// store read it, and how the joining request holds it.
struct JoiningPartial<Kept: Sendable, Hold: Sendable>: Sendable {
    /// The partial upload's ID.
    let id: String
    /// The partial upload as read, held: whole.
    let upload: Kept
    /// How the joining request holds it.
    let hold: Hold
}
