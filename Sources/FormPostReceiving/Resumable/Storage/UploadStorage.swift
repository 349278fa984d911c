/// Where a resumable protocol keeps its uploads: the seam between a protocol's requests,
/// written once against it, and a store — the directory (``DirectoryUploads``) or object
/// storage (``BucketUploads``). Its shape is tusd's: a store of uploads (create one, read
/// it, write a chunk, finish, terminate) and a lock per upload, held around each change.
/// A new store implements these operations, and the protocols' handler-level tests run on it.
///
/// What a store does on its own, each protocol alike: expiry (an expired upload is removed
/// when read, and answered ``UploadStorageFailure/expired``), the uploads' running SHA-256
/// (the receipt's, taken beside the writes), the admission limits, retrying completions
/// that failed, and sweeping what was left.
protocol UploadStorage<Info>: Sendable {
    /// What the protocol saves of an upload.
    associatedtype Info: ResumableUploadInfo
    /// How a request holds an upload: the directory's lock, the bucket's lease.
    associatedtype Hold: Sendable
    /// An upload as read from the store.
    associatedtype Kept: KeptUpload<Info>
    /// What an append wrote that does not count yet (``keep(_:of:id:completing:holding:)`` or
    /// ``discard(_:of:id:holding:)`` settles it).
    associatedtype Pending

    /// Whether a completion that failed, or that another request holds, is taken up again
    /// by the store itself until it succeeds (the directory's ``CompletionRetries``): an
    /// upload whose every byte is there may then be answered whole before it is stored.
    var completesInBackground: Bool { get }

    /// Creates the upload `info` if the admission limits take it for `client` (its address,
    /// or nil); its ID.
    ///
    /// - Throws: ``UploadAdmission/Refusal`` past a limit; what the store throws.
    func create(_ info: Info, client: String?) async throws -> String

    /// Creates the upload `info` as ``create(_:client:)`` does, and runs `body` with its ID
    /// holding it from its admission on (a request on it ends this one, or is refused, as
    /// `claim` says): no sweep removes it before `body` wrote its first bytes, however long
    /// that takes.
    func creating<T>(_ info: Info, client: String?, claim: UploadHoldClaim, _ body: (String, Hold) async throws -> T) async throws -> T

    /// Runs `body` holding the upload `id`, which no other request changes meanwhile (here
    /// or, on a shared store, on another receiver); a request on this receiver that holds
    /// it is refused or ended as `claim` says.
    ///
    /// - Throws: ``UploadStorageFailure/held`` while another request holds it; what `body` throws.
    func holding<T>(_ id: String, claim: UploadHoldClaim, _ body: (Hold) async throws -> T) async throws -> T

    /// The upload `id` as kept, read while no request on this receiver writes it (one that
    /// holds it is refused or ended as `claim` says): what it wrote is counted. A request on
    /// another receiver may write it meanwhile: nothing it writes is counted in this answer.
    func reading(_ id: String, claim: UploadHoldClaim) async throws -> Kept

    /// The upload `id` as kept. With `holding`, a store may settle first what a stopped
    /// completion left (the directory does, unless not `finishing`; object storage leaves it
    /// to ``finish(_:id:holding:)``), and drops bytes no append acknowledged.
    ///
    /// - Throws: ``UploadStorageFailure/notFound``; ``UploadStorageFailure/expired`` (the
    ///   upload is removed).
    func current(_ id: String, holding: Hold?, finishing: Bool) async throws -> Kept

    /// Saves `upload`'s info as it is now; the upload as saved.
    func save(_ upload: Kept, id: String, holding: Hold) async throws -> Kept

    /// When `upload` expires unless it is active again before, in seconds since 1970.
    func expires(_ upload: Kept) -> Double

    /// When a new upload of `info` expires unless it is active before, in seconds since 1970.
    func expires(new info: Info) -> Double

    /// Writes `body` after `upload`'s bytes, at most `room` bytes of it; `checksum` takes
    /// every byte received. When `verifying`, nothing of it may count until
    /// ``keep(_:of:id:completing:holding:)`` (its checksum is checked first); else what
    /// reached the store of a body that was cut counts, as far as the store can keep it.
    ///
    /// - Throws: what the store throws; what it kept of the bytes is settled then.
    func append(_ body: ReceiverRequestBody, to upload: Kept, id: String, room: Int64, verifying: Bool,
                checksum: inout ChecksumHasher?, holding: Hold) async throws -> WrittenAppend<Pending>

    /// Counts `written` after `upload`'s bytes, and with `completing` (every byte is there)
    /// stores the upload; the upload as kept now.
    func keep(_ written: WrittenAppend<Pending>, of upload: Kept, id: String, completing: Bool, holding: Hold) async throws -> Kept

    /// Undoes `written`: nothing of it counts.
    func discard(_ written: WrittenAppend<Pending>, of upload: Kept, id: String, holding: Hold) async throws

    /// Stores `upload`, whose every byte is there: its recorded completion finished, or begun.
    func finish(_ upload: Kept, id: String, holding: Hold) async throws -> Kept

    /// Removes `upload` — all of it but a stored file, which the application was told of —
    /// its `post-terminate` event (`ended`) recorded first, if any.
    func terminate(_ upload: Kept, id: String, announcing ended: UploadEvent.Upload?, holding: Hold) async throws

    /// Marks the upload `id` active now (an upload that receives no byte of its own: a tus
    /// final upload awaiting its partial uploads).
    func touch(_ id: String) async
}
