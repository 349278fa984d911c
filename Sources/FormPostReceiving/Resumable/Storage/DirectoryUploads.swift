#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOPosix

/// Resumable uploads kept in the directory (``UploadStore``): the store the receivers use
/// unless the configuration names object storage. An upload is held by this server's lock
/// (``UploadLocks``); its bytes are its data file, appended to in place; a completion links
/// that file where stored files go (``UploadStore/complete(_:as:pending:done:announcing:)``),
/// and one that failed is tried again (``CompletionRetries``) until it succeeds.
struct DirectoryUploads<Info: DirectoryUploadInfo>: UploadStorage {
    let store: UploadStore
    let locks: UploadLocks
    let digests: RunningDigests
    let unverified: UnverifiedAppends
    let retries: CompletionRetries
    let lifetime: UploadExpiry
    let admission: UploadAdmission
    let threadPool: NIOThreadPool
    /// The path uploads are created at, which their events name.
    let basePath: String
    let logger: Logger

    /// These uploads, or when the configuration names object storage its `objects`, with
    /// the same locks, running digests, base path and logger (uploads there expire `expiry`
    /// after their last activity).
    func or(_ objects: ObjectUploadStore<Info>?, expiry: Duration) -> any UploadStorage<Info> {
        guard let objects else { return self }
        return bucket(objects, expiry: expiry)
    }

    /// The uploads kept in `objects`, with the same locks, running digests, base path and
    /// logger (they expire `expiry` after their last activity).
    func bucket(_ objects: ObjectUploadStore<Info>, expiry: Duration) -> BucketUploads<Info> {
        BucketUploads(objects: objects, locks: locks, digests: digests, expiry: expiry, basePath: basePath, logger: logger)
    }

    /// True: ``CompletionRetries``.
    var completesInBackground: Bool { true }

    func create(_ info: Info, client: String?) async throws -> String {
        try await creating(info, client: client, claim: .refusedWhileHeld) { id, _ in id }
    }

    /// The upload admitted, under the lock admission took for it (``UploadAdmission/admit(_:created:client:connection:store:expiry:locks:digests:logger:)``).
    func creating<T>(_ info: Info, client: String?, claim: UploadHoldClaim, _ body: (String, UInt64) async throws -> T) async throws -> T {
        let uploads = self
        let (id, token) = try await threadPool.runIfActive {
            try uploads.admission.admit(info, created: info.created, client: client, connection: claim.connection, store: uploads.store,
                                        expiry: uploads.lifetime, locks: uploads.locks, digests: uploads.digests, logger: uploads.logger)
        }
        defer { locks.release(id, token: token) }
        return try await body(id, token)
    }

    /// Runs `body` holding this server's lock on `id`, taken as `claim` says.
    func holding<T>(_ id: String, claim: UploadHoldClaim, _ body: (UInt64) async throws -> T) async throws -> T {
        guard let token = await claim.acquire(id, in: locks) else { throw UploadStorageFailure.held }
        defer { locks.release(id, token: token) }
        return try await body(token)
    }

    /// The upload `id` read under its lock (``current(_:holding:finishing:)``, held).
    func reading(_ id: String, claim: UploadHoldClaim) async throws -> DirectoryUpload<Info> {
        try await holding(id, claim: claim) { token in try await current(id, holding: token, finishing: true) }
    }

    /// The upload `id` and its offset (its length once stored — also when a completion
    /// stores it meanwhile). What a completion that stopped left is settled: the leftover
    /// data of a stored upload is removed; held, what the protocol left undone is done
    /// (``DirectoryUploadInfo/settled(_:in:)``: a form's files moved), a recorded completion
    /// whose data is linked already is saved stored (unless not `finishing`), and the bytes
    /// of an unverified append a stopped server left are cut off.
    ///
    /// - Throws: ``UploadStorageFailure/notFound``; ``UploadStorageFailure/expired`` for an
    ///   expired upload (removed now if no other request holds it, else by a later sweep).
    func current(_ id: String, holding: UInt64?, finishing: Bool) async throws -> DirectoryUpload<Info> {
        let uploads = self
        let kept = try await threadPool.runIfActive { try uploads.read(id, held: holding != nil, finishing: finishing) }
        guard holding != nil, kept.info.verified != nil, !kept.info.isStored else { return kept }
        return DirectoryUpload(info: try await dropUnverified(id, info: kept.info, at: kept.offset), offset: kept.offset)
    }

    /// ``current(_:holding:finishing:)`` on the file system: it blocks.
    private func read(_ id: String, held: Bool, finishing: Bool) throws -> DirectoryUpload<Info> {
        guard let loaded = store.load(id, as: Info.self) else { throw UploadStorageFailure.notFound }
        if lifetime.hasExpired(id, created: loaded.created, in: store) {
            UploadExpiry.remove(id, from: store, locks: locks, digests: digests, progresses: lifetime.progresses, held: held)
            throw UploadStorageFailure.expired
        }
        var info = loaded
        if held {
            do {
                info = try loaded.settled(id, in: store)
            } catch {
                retries.add(id)
                throw error
            }
        }
        if info.isStored || info.isJoined {
            // Its leftover data goes (the last step of a completion: a holder's removal of it too is harmless).
            store.removeData(id)
            return DirectoryUpload(info: info, offset: info.knownLength ?? 0)
        }
        if held, finishing, let completion = info.completing, store.isLinked(id, as: completion) {
            let done = info.stored(id: id, as: completion, bucket: nil)
            try store.complete(id, as: completion, pending: info, done: done, announcing: done.finishedEvent(basePath: basePath))
            return DirectoryUpload(info: done, offset: done.knownLength ?? 0)
        }
        let unchecked = info.verified != nil
        var hasData = true
        let offset = unverified.offset(of: id) {
            let size = Self.offset(of: id, info: info, in: store, unverifiedWhenRead: unchecked)
            hasData = size != nil
            return size ?? 0
        }
        if hasData { return DirectoryUpload(info: info, offset: offset) }
        // The data went since the state was read: a completion stored it meanwhile, or the upload was removed.
        guard let now = store.load(id, as: Info.self), now.isStored else { throw UploadStorageFailure.notFound }
        return DirectoryUpload(info: now, offset: now.knownLength ?? 0)
    }

    /// The offset of `id` (`info`) when no append of this server's is unverified: the size
    /// of its data (``DirectoryUploadInfo/dataOffset(of:in:)``), or less when its state says
    /// an append is unverified (`unverifiedWhenRead`: it did when read; read again, as the
    /// append may have ended since) — that of a server that stopped meanwhile, or whose end
    /// could not be saved: its bytes past the offset it began at count for nothing. Nil when
    /// it has no data. It blocks on the file system.
    static func offset(of id: String, info: Info, in store: UploadStore, unverifiedWhenRead: Bool) -> Int64? {
        guard let size = info.dataOffset(of: id, in: store) else { return nil }
        guard unverifiedWhenRead, let verified = store.load(id, as: Info.self)?.verified else { return size }
        return min(verified, size)
    }

    func save(_ upload: DirectoryUpload<Info>, id: String, holding: UInt64) async throws -> DirectoryUpload<Info> {
        let (store, info) = (self.store, upload.info)
        try await threadPool.runIfActive { try store.save(info, id: id) }
        return upload
    }

    /// ``UploadExpiry/lifetime`` after its creation.
    func expires(_ upload: DirectoryUpload<Info>) -> Double {
        expires(new: upload.info)
    }

    func expires(new info: Info) -> Double {
        lifetime.removal(created: info.created)
    }

    func terminate(_ upload: DirectoryUpload<Info>, id: String, announcing ended: UploadEvent.Upload?, holding: UInt64) async throws {
        let store = self.store
        try await threadPool.runIfActive {
            // Recorded first: an end the application will not hear of is never answered.
            if let ended { try store.announce(ended, as: nil, type: UploadEvent.postTerminate) }
            // A stored file stays: the application was told of it (post-finish) and owns it.
            store.remove(id)
        }
        digests.remove(id)
        lifetime.progresses?.remove(id)
    }

    /// Its data's modification time set to now (``UploadStore/touch(_:)``).
    func touch(_ id: String) async {
        let store = self.store
        try? await threadPool.runIfActive { store.touch(id) }
    }
}
