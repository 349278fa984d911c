import Multipart

/// Where a receiver stores files and what it accepts.
public struct ReceiverConfiguration: Sendable {
    /// The directory files are stored in; created if missing.
    public var directory: String
    /// The largest request body, in bytes.
    public var maxBodySize: Int64
    /// The largest file part, in bytes.
    public var maxFileSize: Int64
    /// The most parts in a form.
    public var maxParts: Int
    /// The largest text field kept in memory, in bytes.
    public var maxFieldSize: Int64
    /// The most bytes of all text fields of one request together (they are kept in memory
    /// and echoed in the receipt).
    public var maxTotalFieldBytes: Int64
    /// The permissions of stored files (their partial files are always 0600).
    public var storedFileMode: UInt16
    /// The most resumable uploads in progress at once, per protocol (tus, the IETF draft):
    /// each holds disk space until it completes or expires, so creations past this answer
    /// 503. As many complete uploads have their state kept until they expire (so that a
    /// client whose last answer was lost learns the upload is done); past that, a creation
    /// forgets the oldest of the client address that has the most (their stored files stay).
    public var maxUploadsInProgress: Int
    /// The most resumable uploads in progress at once from one client address, per
    /// protocol: past this, that address's creations answer 503 while others' are still
    /// taken. The address is the connection's peer: behind a reverse proxy every client
    /// has the proxy's address, so there this limit bounds them all together, unless the
    /// proxy is one of `UploadServer/trustedProxies` (then it is the client the proxy
    /// forwarded); IPv6 addresses count per /56 (a site's usual allocation).
    /// With the defaults (1000 in all, 10 per address), 100 addresses are needed to fill
    /// the receiver.
    public var maxUploadsInProgressPerClient: Int
    /// The bytes the resumable uploads in progress from one client address may hold, per
    /// protocol, before that address's creations answer 503 (as their files said when last
    /// looked at: within a second of a creation, and at every sweep). Uploads already made
    /// go on to their end.
    public var maxBytesInProgressPerClient: Int64
    /// How long a resumable upload in progress may go without receiving a byte (counted
    /// from its last byte, or its creation): past this, it is removed (requests on it
    /// answer 404), and no longer holds its place among the uploads in progress. A client
    /// that pauses longer must start again. Every upload, complete or not, is also removed
    /// once it has been inactive for the receiver's expiry (one day by default).
    public var idleUploadExpiry: Duration
    /// Where resumable uploads in progress are kept (`tus/` and `resumable/` in it), so that
    /// `directory` holds stored files only; nil keeps them in `directory`'s hidden `.tus/`
    /// and `.resumable/`. It must be on the same file system and mount as `directory` (a
    /// completed upload is hard-linked into place): a receiver tries such a link at start
    /// and refuses to start otherwise
    /// (``ReceiverSetupError/stateDirectoryOnAnotherFileSystem(_:)``). Uploads in progress
    /// found in the hidden directories are moved there at start.
    public var stateDirectory: String?
    /// Whether the files of a plain multipart upload are synced to the disk before its
    /// receipt is answered (``ReceiptDurability/synced``, the default) or left to the page
    /// cache; resumable uploads are synced before every answer either way.
    public var durability: ReceiptDurability
    /// A bucket of object storage to store the files of multipart forms in, instead of
    /// ``directory`` (each receipt's file then names the `bucket` and its key
    /// as `storedAs`); nil stores them in ``directory``. ``TusReceiver`` and
    /// ``ResumableUploadReceiver`` keep their uploads in the bucket too (under `PREFIX.tus/`
    /// and `PREFIX.resumable/`, continued by any receiver on it; see "Storing files in
    /// object storage"); resumable forms of the IETF draft are then refused (415).
    public var objectStorage: (any ObjectStore)?
    /// The memory that buffers of parts may hold at once with ``objectStorage`` (the files
    /// of forms and the appends of resumable uploads gather each part in memory before it is
    /// sent), shared by every receiver made with this configuration: 64 MiB by default, nil
    /// for no limit. Past it, requests wait for memory before they take more of their bodies.
    /// Within it each file or append keeps two parts in flight (three buffers); with no
    /// budget, one (two buffers).
    public var partMemory: PartMemoryBudget? = PartMemoryBudget(limit: 64 << 20)
    /// With ``objectStorage``, how long after its creation a resumable upload expires, however
    /// active: its next request is answered 410 and removes it (a stored file stays; one that
    /// no request comes for is removed by the sweep once idle past the expiry), or nil for no
    /// such limit. The
    /// bucket's lifecycle rule that aborts incomplete multipart uploads must be longer: it
    /// counts from the multipart upload's beginning, whatever the upload's activity.
    public var resumableMaxLifetime: Duration?
    /// Where a `post-finish` ``UploadEvent`` of each stored upload is recorded, durably,
    /// before the upload is answered complete (for ``UploadEventDelivery`` to hand on), or
    /// nil for none: the multipart forms of ``UploadReceiver``, the uploads of
    /// ``TusReceiver`` and of ``ResumableUploadReceiver`` (forms too) made with this
    /// configuration. An upload whose event cannot be recorded is not answered complete: a
    /// form is answered 500 and its files removed; a resumable upload's completion fails
    /// and is taken up again (as after any failed step), event included. A directory's
    /// ``UploadEventOutbox``, or, with ``objectStorage``, the bucket's ``ObjectEventQueue``
    /// (so that an event outlives the receiver and its disk).
    public var events: (any UploadEventQueue)?

    /// Creates a configuration; by default 10 GiB bodies and files, 1000 parts, 1 MiB per
    /// field and 4 MiB of fields in all, stored files readable by their owner only (0600),
    /// 1000 resumable uploads in progress, 10 from one client address holding at most
    /// 20 GiB, each removed when it has received nothing for an hour, files synced to the
    /// disk before their receipt.
    public init(directory: String, maxBodySize: Int64 = 10 << 30, maxFileSize: Int64 = 10 << 30, maxParts: Int = 1000, maxFieldSize: Int64 = 1 << 20,
                maxTotalFieldBytes: Int64 = 4 << 20, storedFileMode: UInt16 = 0o600, maxUploadsInProgress: Int = 1000,
                maxUploadsInProgressPerClient: Int = 10, maxBytesInProgressPerClient: Int64 = 20 << 30, idleUploadExpiry: Duration = .seconds(3600),
                stateDirectory: String? = nil, durability: ReceiptDurability = .synced, objectStorage: (any ObjectStore)? = nil) {
        self.directory = directory
        self.maxBodySize = maxBodySize
        self.maxFileSize = maxFileSize
        self.maxParts = maxParts
        self.maxFieldSize = maxFieldSize
        self.maxTotalFieldBytes = maxTotalFieldBytes
        self.storedFileMode = storedFileMode
        self.maxUploadsInProgress = maxUploadsInProgress
        self.maxUploadsInProgressPerClient = maxUploadsInProgressPerClient
        self.maxBytesInProgressPerClient = maxBytesInProgressPerClient
        self.idleUploadExpiry = idleUploadExpiry
        self.stateDirectory = stateDirectory
        self.durability = durability
        self.objectStorage = objectStorage
    }

    var parserLimits: MultipartParserLimits {
        MultipartParserLimits(maxParts: maxParts, maxPartBytes: max(maxFileSize, maxFieldSize), maxTotalBytes: maxBodySize)
    }

    /// Checks a text field of `fieldBytes` so far, among `totalFieldBytes` of all fields.
    ///
    /// - Throws: ``ReceiverFailure/limitExceeded(_:value:)`` past ``maxFieldSize`` or ``maxTotalFieldBytes``.
    func checkField(_ fieldBytes: Int64, total totalFieldBytes: Int64) throws {
        if fieldBytes > maxFieldSize { throw ReceiverFailure.limitExceeded(.maxFieldSize, value: maxFieldSize) }
        if totalFieldBytes > maxTotalFieldBytes { throw ReceiverFailure.limitExceeded(.maxTotalFieldBytes, value: maxTotalFieldBytes) }
    }
}
