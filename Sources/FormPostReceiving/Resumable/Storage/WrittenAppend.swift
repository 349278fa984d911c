/// An append a store wrote (``UploadStorage/append(_:to:id:room:verifying:checksum:holding:)``),
/// not counted yet.
struct WrittenAppend<Pending> {
    /// The bytes of the body taken (never past the room given).
    var received: Int64
    /// Whether the request was cut (its client went away) before its end.
    var cut: Bool
    /// Whether the body went past the room given (nothing past it was taken).
    var overflowed: Bool
    /// What the store needs to keep it or undo it.
    var pending: Pending
}
