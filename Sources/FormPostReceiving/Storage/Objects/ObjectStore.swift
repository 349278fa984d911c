import NIOCore

/// A bucket of an object store, as the receivers keep files and resumable uploads in it:
/// the seam between the receiving core and a store's client. `FormPostS3`'s
/// `ObjectStorage` implements it for S3 and the stores that speak its API (Ceph's RADOS
/// Gateway, MinIO, R2); another store implements these operations with its own requests.
///
/// Every operation names `what` it does, for errors (``ObjectStorageError``), and throws
/// ``ObjectStorageError/refused(what:status:code:message:)`` with the store's status for
/// an answer that is not success — 404 for a key that is not there, 412 (or 409) for a
/// condition that did not hold — after the retries the store's client makes for a
/// transient failure (at most `attempts` in all, its own default when nil).
public protocol ObjectStore: Sendable {
    /// The bucket's name, as receipts and events report where a file went.
    var bucket: String { get }
    /// What every key written begins with (`uploads/`, or empty).
    var prefix: String { get }
    /// How long a resumable upload's lease lasts before another receiver may take it over.
    var leaseDuration: Duration { get }
    /// How often each resumable receiver sweeps its uploads (expiry, stuck completions).
    var sweepInterval: Duration { get }
    /// Whether a `DELETE` with `If-Match` is refused (412) when the ETag differs: Amazon S3
    /// and moto refuse it, Ceph's RADOS Gateway 16.2 removes the object all the same. Where
    /// it is not honoured, a lease is released by a conditional write instead of a delete
    /// (``delete(_:condition:what:attempts:)`` is then never sent with a condition it
    /// relies on). False unless the store says otherwise.
    var honoursDeleteConditions: Bool { get }
    /// The same bucket for the requests of leases (taking, renewing,
    /// releasing one): sent on connections of their own, so that a renewal never waits
    /// behind parts in flight, and each attempt cut off well within the lease, so that one
    /// lost on the way is sent again while the lease still runs. This store itself unless
    /// the store says otherwise.
    var leaseTraffic: any ObjectStore { get }
    /// Whether the store keeps a CRC32 of each part (S3's flexible checksums): the
    /// multipart uploads of forms' files and of resumable uploads (but a tus final upload's,
    /// whose parts the store copies) are then begun with ``ObjectAttributes/partChecksums``.
    /// False unless the store says otherwise.
    var checksumsParts: Bool { get }

    /// The size of every part but the last of a file of at most `maxFileSize` bytes.
    func partSize(maxFileSize: Int64) -> Int
    /// Why the store cannot be used now (for readiness), or nil when it can.
    func problem() async -> String?

    /// Writes the object `key` whole with `body`, made with `attributes`, only if
    /// `condition` holds; returns the store's answer (its ``ObjectAnswer/etag``).
    func put(_ key: String, body: ByteBuffer, attributes: ObjectAttributes, condition: ObjectCondition, what: String,
             attempts: Int?) async throws -> ObjectAnswer
    /// The object `key`, at most `maxBytes` of it, with its ETag.
    func get(_ key: String, maxBytes: Int, what: String) async throws -> ObjectAnswer
    /// The size of the object `key`, or nil when it cannot be told.
    func size(of key: String, what: String) async throws -> Int64?
    /// The bytes `range` of the object `key`.
    func bytes(of key: String, range: Range<Int64>, what: String) async throws -> ByteBuffer
    /// Reads the object `key` from its beginning, handing each buffer to `each` as it
    /// arrives (never held whole); not retried.
    func read(_ key: String, what: String, each: (ByteBuffer) throws -> Void) async throws
    /// Removes the object `key` if `condition` holds, in a task of its own (sent even when
    /// the caller is cancelled), best effort: a failure leaves the object to the bucket's
    /// lifecycle rule or the sweep.
    func delete(_ key: String, condition: ObjectCondition, what: String, attempts: Int?) async
    /// Every object whose key begins with `prefix`.
    func list(prefix: String) async throws -> [ListedObject]
    /// Every object whose key begins with `prefix` and has no `/` past it: what lies under
    /// a "folder" of `prefix` is not listed (S3: `ListObjectsV2` with the delimiter `/`).
    func listTopLevel(prefix: String) async throws -> [ListedObject]
    /// Every multipart upload in progress whose key begins with `prefix` (S3's
    /// `ListMultipartUploads`); a store that cannot list them answers none, and leaves them
    /// to the bucket's lifecycle rule.
    func listMultipartUploads(prefix: String) async throws -> [ListedMultipartUpload]

    /// Begins a multipart upload of the object `key`, made with `attributes`; returns its ID.
    func beginMultipartUpload(of key: String, attributes: ObjectAttributes) async throws -> String
    /// Sends `bytes` as part `number` of the multipart upload `uploadID` of `key`, each
    /// attempt within `timeout`; with its CRC32 when `checksummed` (the multipart upload was
    /// begun with ``ObjectAttributes/partChecksums``).
    func sendPart(_ bytes: ByteBuffer, number: Int, of key: String, uploadID: String, checksummed: Bool, timeout: Duration) async throws -> ObjectPart
    /// Copies the bytes `range` of the object `source` as part `number` of the multipart
    /// upload `uploadID` of `key`, the store copying them (S3's `UploadPartCopy`).
    func copyPart(from source: String, range: Range<Int64>, number: Int, of key: String, uploadID: String) async throws -> ObjectPart
    /// Makes the object `key` of `parts` of the multipart upload `uploadID`.
    func completeMultipartUpload(of key: String, uploadID: String, parts: [ObjectPart]) async throws
    /// Aborts the multipart upload `uploadID` of `key`, best effort, as ``delete(_:condition:what:attempts:)``.
    func abortMultipartUpload(of key: String, uploadID: String, attempts: Int?) async
    /// Records the SHA-256 (`sha256`, hexadecimal) of the object `key`, known only once a
    /// multipart object is whole.
    func tagSHA256(of key: String, _ sha256: String) async throws
}

extension ObjectStore {
    /// False: a store that does not say is taken not to honour `If-Match` on `DELETE`.
    public var honoursDeleteConditions: Bool { false }

    /// This store itself: its leases' requests go as all others do.
    public var leaseTraffic: any ObjectStore { self }

    /// False: a store that does not say takes parts without checksums.
    public var checksumsParts: Bool { false }

    /// ``list(prefix:)``, without the keys that have a `/` past `prefix`: a store that lists
    /// by delimiter lists fewer.
    public func listTopLevel(prefix: String) async throws -> [ListedObject] {
        try await list(prefix: prefix).filter { !$0.key.dropFirst(prefix.count).contains("/") }
    }

    /// None: a store that cannot list its multipart uploads leaves them to the bucket's
    /// lifecycle rule.
    public func listMultipartUploads(prefix: String) async throws -> [ListedMultipartUpload] { [] }

    /// ``put(_:body:attributes:condition:what:attempts:)`` with the client's retries.
    func put(_ key: String, body: ByteBuffer, attributes: ObjectAttributes = ObjectAttributes(), condition: ObjectCondition = .none,
             what: String) async throws -> ObjectAnswer {
        try await put(key, body: body, attributes: attributes, condition: condition, what: what, attempts: nil)
    }

    /// ``delete(_:condition:what:attempts:)`` without a condition.
    func delete(_ key: String, what: String, attempts: Int? = nil) async {
        await delete(key, condition: .none, what: what, attempts: attempts)
    }
}
