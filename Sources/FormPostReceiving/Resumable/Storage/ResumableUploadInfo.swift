import Multipart

/// What a resumable upload saves of itself besides its bytes: tus's ``TusUploadInfo`` and
/// the draft's ``DraftUploadInfo``. It tells the stores (``UploadStorage``) and the
/// completion shared by both protocols what they need to know.
protocol ResumableUploadInfo: Codable, Equatable, Sendable {
    /// The upload's length, once known (a draft upload may learn it only with its last byte).
    var knownLength: Int64? { get }
    /// When the upload was created, in seconds since 1970.
    var created: Double { get }
    /// While its completion is under way: the key and SHA-256 its object is stored with,
    /// and its event's ID. Nil before, and once it is stored.
    var completing: UploadCompletion? { get set }
    /// Whether it is stored: its completion finished.
    var isStored: Bool { get }
    /// Whether it takes no more bytes of its own although not stored: a tus partial upload
    /// joined into a final upload.
    var isJoined: Bool { get }
    /// Whether it is a part of a concatenation (a tus partial upload), whose bytes are
    /// stored only as part of another upload: on object storage its object is kept with the
    /// uploads' state, never where stored files go.
    var isPartial: Bool { get }
    /// Whether its bytes are other uploads' joined (a tus final upload): on object storage
    /// its multipart upload is begun when they are joined, not when it is created.
    var joinsUploads: Bool { get }
    /// The `Content-Type` its object is stored with, if any.
    var objectContentType: String? { get }
    /// The upload stored as `completion` says (in `bucket`, on object storage): ``isStored``,
    /// and no longer ``completing``.
    func stored(id: String, as completion: UploadCompletion, bucket: String?) -> Self
    /// The upload as its `post-finish` event tells it once stored (its receipt), an upload
    /// of its protocol created on `basePath`.
    func finishedEvent(basePath: String) -> UploadEvent.Upload
    /// The protocol, as metrics and events name it.
    static var uploadProtocol: UploadProtocol { get }
}

extension ResumableUploadInfo {
    /// Whether every byte has arrived: its completion is recorded, or finished.
    var isWhole: Bool { completing != nil || isStored }
}
