/// An upload as its store (``UploadStorage``) read it: what its protocol saved, and how
/// many of its bytes the store keeps.
protocol KeptUpload<Info>: Sendable {
    /// What the protocol saves of an upload.
    associatedtype Info: ResumableUploadInfo
    /// What the protocol saved; a change counts once saved (``UploadStorage/save(_:id:holding:)``).
    var info: Info { get set }
    /// The bytes kept: where the next append begins (the length, once stored).
    var offset: Int64 { get }
}
