#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import Logging
import NIOCore

/// Resumable uploads kept in object storage (``ObjectUploadStore``), so that any receiver
/// on the bucket answers any request of any upload. An upload is held by its lease
/// (``HeldLease``: 423 while another receiver holds it), checked before each write; its
/// bytes are parts of a multipart upload and a tail object of fewer bytes than a part, and
/// count once its state object, saved conditionally on the ETag it was read with, names
/// them. Its offset counts only those.
struct BucketUploads<Info: ResumableUploadInfo>: UploadStorage {
    let objects: ObjectUploadStore<Info>
    /// This receiver's locks, taken before the lease: a request here on an upload another
    /// request here holds is refused or ends it without asking the store.
    let locks: UploadLocks
    let digests: RunningDigests
    /// How long an upload lives after its last activity.
    let expiry: Duration
    /// The path uploads are created at, which their events name.
    let basePath: String
    let logger: Logger

    /// False: a recorded completion is finished by the upload's next request, or by the
    /// sweep of any receiver on the bucket.
    var completesInBackground: Bool { false }

    /// The upload begun (``ObjectUploadStore/startAdmitted(_:client:expiry:key:beginningMultipart:)``).
    /// A partial upload's object is never a stored file: it is kept with the uploads' state.
    /// A final upload begins its multipart upload when it is joined: the bucket's lifecycle
    /// rule would abort one begun long before.
    func create(_ info: Info, client: String?) async throws -> String {
        let prefix = objects.statePrefix
        return try await objects.startAdmitted(info, client: client, expiry: expiry, key: info.isPartial ? { prefix + $0 + ".partial" } : nil,
                                               beginningMultipart: !info.joinsUploads)
    }

    /// Runs `body` holding this receiver's lock on `id` (taken as `claim` says), then its
    /// lease (``ObjectUploadStore/holdingLease(_:_:)``).
    /// The upload begun (``create(_:client:)``), then held (``holding(_:claim:_:)``): its
    /// lease taken at once, before `body` writes its first bytes.
    func creating<T>(_ info: Info, client: String?, claim: UploadHoldClaim, _ body: (String, HeldLease) async throws -> T) async throws -> T {
        let id = try await create(info, client: client)
        return try await holding(id, claim: claim) { try await body(id, $0) }
    }

    func holding<T>(_ id: String, claim: UploadHoldClaim, _ body: (HeldLease) async throws -> T) async throws -> T {
        guard let token = await claim.acquire(id, in: locks) else { throw UploadStorageFailure.held }
        defer { locks.release(id, token: token) }
        return try await objects.holdingLease(id, body)
    }

    /// The saved state of `id`, read under this receiver's lock but not the lease: a request
    /// here that held it has saved what it wrote.
    func reading(_ id: String, claim: UploadHoldClaim) async throws -> SavedObjectUpload<Info> {
        guard let token = await claim.acquire(id, in: locks) else { throw UploadStorageFailure.held }
        defer { locks.release(id, token: token) }
        return try await current(id, holding: nil, finishing: true)
    }

    /// The saved state of `id` (``ObjectUploadStore/current(_:expiry:)``); held, with the
    /// ETag the next save must match. A recorded completion is finished by
    /// ``finish(_:id:holding:)``, not here.
    func current(_ id: String, holding held: HeldLease?, finishing: Bool) async throws -> SavedObjectUpload<Info> {
        guard let held else { return SavedObjectUpload(state: try await objects.current(id, expiry: expiry), etag: nil) }
        guard let (state, etag) = try await objects.load(id) else { throw UploadStorageFailure.notFound }
        try await objects.removeIfExpired(id, state, expiry: expiry, holding: held)
        return SavedObjectUpload(state: state, etag: etag)
    }

    func save(_ upload: SavedObjectUpload<Info>, id: String, holding held: HeldLease) async throws -> SavedObjectUpload<Info> {
        guard let etag = upload.etag else { throw UploadStorageFailure.changed }
        try held.check()
        return SavedObjectUpload(state: upload.state, etag: try await objects.save(upload.state, id: id, replacing: etag))
    }

    func expires(_ upload: SavedObjectUpload<Info>) -> Double {
        objects.expires(upload.state, expiry: expiry)
    }

    func expires(new info: Info) -> Double {
        objects.expires(objects.newState(info), expiry: expiry)
    }

    /// The body gathered after the upload's bytes and sent in parts (``ObjectUploadAppend``);
    /// nothing of it counts until kept, `verifying` or not.
    func append(_ body: ReceiverRequestBody, to upload: SavedObjectUpload<Info>, id: String, room: Int64, verifying: Bool,
                checksum: inout ChecksumHasher?, holding held: HeldLease) async throws -> WrittenAppend<BucketAppend<Info>> {
        let before = digests.take(id, at: upload.offset)
        var digest = before
        var append = ObjectUploadAppend(store: objects, id: id, state: upload.state, lease: held, room: room)
        let outcome: ObjectUploadAppend<Info>.Outcome
        do {
            outcome = try await append.run(body, digest: &digest, checksum: &checksum)
        } catch {
            await append.abandon()
            append.endMemory()
            throw error
        }
        return WrittenAppend(received: outcome.received, cut: outcome.cut, overflowed: outcome.overflowed,
                             pending: BucketAppend(append: append, outcome: outcome, before: before, digest: digest))
    }

    /// The append's parts named by the state, and its last bytes in a new tail object — or,
    /// `completing`, sent as the last part and the upload completed
    /// (``ObjectUploadStore/complete(_:state:etag:parts:uploadID:rest:digest:holding:basePath:logger:)``).
    func keep(_ written: WrittenAppend<BucketAppend<Info>>, of upload: SavedObjectUpload<Info>, id: String, completing: Bool,
              holding held: HeldLease) async throws -> SavedObjectUpload<Info> {
        let (append, outcome) = (written.pending.append, written.pending.outcome)
        defer { append.endMemory() }
        guard let etag = upload.etag else { throw UploadStorageFailure.changed }
        if completing {
            do {
                try held.check()
                var state = upload.state
                state.checksummedParts = outcome.checksummedParts
                let done = try await objects.complete(id, state: state, etag: etag, parts: outcome.parts, uploadID: outcome.uploadID,
                                                      rest: outcome.rest, digest: written.pending.digest, holding: held, basePath: basePath, logger: logger)
                return SavedObjectUpload(state: done, etag: nil)
            } catch {
                // A multipart upload this append began is not left behind unnamed.
                await append.abandonUnsaved(tail: nil)
                throw error
            }
        }
        try held.check()
        guard written.received > 0 else { return upload }
        var next = upload.state
        var tail: ObjectUploadState<Info>.Tail?
        let saved: String
        do {
            tail = outcome.rest.readableBytes > 0 ? try await objects.writeTail(outcome.rest, id: id) : nil
            (next.parts, next.uploadID, next.checksummedParts, next.tail) = (outcome.parts, outcome.uploadID, outcome.checksummedParts, tail)
            try held.check()
            saved = try await objects.save(next, id: id, replacing: etag)
        } catch {
            await append.abandonUnsaved(tail: tail)
            throw error
        }
        if let old = upload.state.tail { await objects.removeObject(old.key) }
        if let digest = written.pending.digest { digests.put(id, digest, offset: upload.offset + written.received) }
        next.active = Date().timeIntervalSince1970
        return SavedObjectUpload(state: next, etag: saved)
    }

    /// The parts it sent aborted with its multipart upload if it began one; they are named
    /// by no state (its parts of an older multipart upload are sent again).
    func discard(_ written: WrittenAppend<BucketAppend<Info>>, of upload: SavedObjectUpload<Info>, id: String, holding held: HeldLease) async throws {
        defer { written.pending.append.endMemory() }
        await written.pending.append.abandon()
        if let before = written.pending.before { digests.put(id, before, offset: upload.offset) }
    }

    /// A recorded completion finished (``ObjectUploadStore/finish(_:state:etag:holding:basePath:logger:)``);
    /// else the upload completed from its parts and tail.
    func finish(_ upload: SavedObjectUpload<Info>, id: String, holding held: HeldLease) async throws -> SavedObjectUpload<Info> {
        guard let etag = upload.etag else { throw UploadStorageFailure.changed }
        if upload.info.completing != nil {
            return SavedObjectUpload(state: try await objects.finish(id, state: upload.state, etag: etag, holding: held, basePath: basePath, logger: logger),
                                     etag: nil)
        }
        let state = upload.state
        var rest = ByteBuffer()
        if let tail = state.tail { rest = try await objects.read(tail, partSize: objects.partSize(of: state)) }
        let done = try await objects.complete(id, state: state, etag: etag, parts: state.parts, uploadID: state.uploadID, rest: rest,
                                              digest: digests.take(id, at: upload.offset), holding: held, basePath: basePath, logger: logger)
        return SavedObjectUpload(state: done, etag: nil)
    }

    /// Under the lease: its `post-terminate` event recorded (if any), then everything of it removed
    /// but a stored object. One whose completion was begun and not finished was never told
    /// of, and goes too.
    func terminate(_ upload: SavedObjectUpload<Info>, id: String, announcing ended: UploadEvent.Upload?, holding held: HeldLease) async throws {
        try held.check()
        if let ended { try await objects.announce(ended, as: nil, type: UploadEvent.postTerminate) }
        try await objects.remove(id, state: upload.state, storedObject: upload.info.completing != nil && !upload.info.isStored, holding: held)
        digests.remove(id)
    }

    /// Its state saved again (stamped active) once its last save is older than a quarter of
    /// the expiry — a read of its state per call, a save now and then. Best effort.
    func touch(_ id: String) async {
        let stale = { (state: ObjectUploadState<Info>) in
            !state.info.isWhole && Date().timeIntervalSince1970 - (state.active ?? state.info.created) > Double(expiry.components.seconds) / 4
        }
        guard let (state, _) = try? await objects.load(id), stale(state) else { return }
        try? await objects.holdingLease(id) { _ in
            guard let (now, etag) = try await objects.load(id), stale(now) else { return }
            _ = try await objects.save(now, id: id, replacing: etag)
        }
    }
}
