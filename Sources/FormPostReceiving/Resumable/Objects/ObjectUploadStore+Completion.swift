#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import Logging
import Multipart
import NIOCore

/// What tus and the draft do alike with an upload in object storage: hold its lease around
/// each change, complete it in steps that can each be taken again, tell when it expired.
extension ObjectUploadStore {
    /// Runs `body` holding the lease of `id`, renewed in the background while it runs
    /// (``HeldLease``), and released after it. When the store no longer has the upload's
    /// multipart upload, the upload ends (``endLost(_:held:error:)``).
    ///
    /// - Throws: ``UploadStorageFailure/held`` while another request holds it;
    ///   ``UploadStorageFailure/lost``; what `body` throws.
    ///
    /// A lease taken over from a holder whose lease ran out unreleased (``ObjectLease/tookOver``)
    /// is fenced first (``fence(_:by:)``), before `body` runs.
    func holdingLease<T>(_ id: String, _ body: (HeldLease) async throws -> T) async throws -> T {
        guard let lease = try await lease(id) else { throw UploadStorageFailure.held }
        return try await HeldLease.holding(lease, for: leaseSeconds, with: leases) { held in
            do {
                if lease.tookOver { try await fence(id, by: lease) }
                return try await body(held)
            } catch let error as ObjectStorageError where error.isLostMultipartUpload {
                throw await endLost(id, held: held, error: error)
            }
        }
    }

    /// Fences off the holder whose lease on `id` ran out and was taken over by `lease`: the
    /// state saved again naming `lease`'s owner (its activity as it was), so that its ETag
    /// changes and no save that holder makes from what it read is taken. Its other writes
    /// cannot harm the upload: its parts are checked by their ETags when the object is made,
    /// a whole object it writes goes to a key of its own, and it checks its lease before each
    /// removal (``HeldLease/check()``).
    func fence(_ id: String, by lease: ObjectLease) async throws {
        guard let (loaded, etag) = try await load(id) else { return }
        var state = loaded
        state.fence = lease.owner
        _ = try await save(state, id: id, replacing: etag, stampingActive: false)
    }

    /// Ends the upload `id`, whose multipart upload the store no longer has (`error`:
    /// `NoSuchUpload` or `InvalidPart` — aborted by the bucket's lifecycle rule, say): no
    /// request could ever complete it. Removed, its stored object aside, and
    /// ``UploadStorageFailure/lost`` returned — unless the lease is lost, the state cannot be
    /// read, or its object is whole already (a completion whose answer was lost, which its
    /// next request finishes): then `error`.
    private func endLost(_ id: String, held: HeldLease, error: ObjectStorageError) async -> any Error {
        guard (try? held.check()) != nil, let (state, _) = try? await load(id) else { return error }
        if state.info.isWhole, let length = state.info.knownLength, await size(of: state.key) == length { return error }
        do {
            try await remove(id, state: state, storedObject: false, holding: held)
        } catch {
            return error
        }
        return UploadStorageFailure.lost
    }

    /// Completes `id`, whose every byte is in `parts` (of `uploadID`) and `rest`: the rest
    /// sent as the last part (or, with no part, the whole upload as one object), the
    /// completion recorded in its state, then finished (``finish(_:state:etag:holding:basePath:logger:)``).
    /// Call it holding the lease (`held`, checked before each step that writes), with
    /// `state` as saved under `etag`, its length known.
    func complete(_ id: String, state: State, etag: String, parts: [State.Part], uploadID: String?, rest: ByteBuffer,
                  digest: SHA256Hasher?, holding held: HeldLease, basePath: String, logger: Logger) async throws -> State {
        var next = state
        (next.parts, next.uploadID, next.tail) = (parts, uploadID, nil)
        var sha256 = digest.map { Hexadecimal.string($0.finalize()) }
        try held.check()
        if let uploadID {
            if rest.readableBytes > 0 {
                next.parts.append(try await sendPart(rest, number: parts.count + 1, key: state.key, uploadID: uploadID,
                                                     checksummed: state.checksummedParts == true))
            }
        } else {
            // Fewer bytes than a part in all: they are all here. They go to a key of this
            // attempt's own, which the state saved next names: a receiver whose lease
            // lapsed meanwhile, and whose save is then refused, writes over nothing another
            // receiver stored, and removes only what it wrote.
            var hasher = SHA256Hasher()
            rest.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            sha256 = Hexadecimal.string(hasher.finalize())
            next.key = store.prefix + UploadStore.randomName()
            try await putWhole(rest, state: next, sha256: sha256!)
        }
        next.info.completing = UploadCompletion(storedAs: next.key, sha256: sha256 ?? "", event: UploadEventOutbox.newID())
        let saved: String
        do {
            // Marked first: a receiver that dies after the state is saved leaves the mark to a sweep.
            try held.check()
            _ = try await store.put(completingKey(id), body: ByteBuffer(), what: "marking the completion of \(id)")
            try held.check()
            saved = try await save(next, id: id, replacing: etag)
        } catch {
            // The whole object put above is not left behind, unless the state names it after
            // all (a save whose answer was lost); nor removed when the state cannot be read.
            if uploadID == nil, let (now, _) = try? await load(id), now.key != next.key { await removeObject(next.key) }
            throw error
        }
        if let old = state.tail { await removeObject(old.key) }
        return try await finish(id, state: next, etag: saved, holding: held, basePath: basePath, logger: logger)
    }

    /// Finishes the recorded completion of `id`, each step of which may be taken again:
    /// the object made from its parts, its SHA-256 (read back when no running hash covered
    /// every byte) tagged on it, its `post-finish` event recorded, its state saved stored —
    /// the lease (`held`) checked before each.
    func finish(_ id: String, state: State, etag: String, holding held: HeldLease, basePath: String, logger: Logger) async throws -> State {
        guard let completion = state.info.completing else { return state }
        do {
            try held.check()
            try await completeMultipart(state)
            let sha256 = completion.sha256.isEmpty ? try await self.sha256(of: state.key) : completion.sha256
            try held.check()
            if state.uploadID != nil { try await store.tagSHA256(of: state.key, sha256) }
            var done = state
            done.info = state.info.stored(id: id, as: UploadCompletion(storedAs: state.key, sha256: sha256, event: completion.event),
                                          bucket: store.bucket)
            try held.check()
            try await announce(done.info.finishedEvent(basePath: basePath), as: completion.event)
            try held.check()
            _ = try await save(done, id: id, replacing: etag)
            await removeObject(completingKey(id))
            admission?.completed(id)
            logger.info("upload \(RequestLogLine.shortID(id)) complete: \(state.key) \(state.offset) bytes")
            ReceiverMetrics.upload(Info.uploadProtocol, .completed)
            return done
        } catch {
            logger.error("upload \(RequestLogLine.shortID(id)): storing it failed, to be tried again by its next request: \(RequestLogLine.redacting("\(error)"))")
            throw error
        }
    }

    /// Whether the upload `state` describes has expired (``expires(_:expiry:)``). One whose
    /// completion is recorded never expires: its next request finishes it.
    func isExpired(_ state: State, expiry: Duration) -> Bool {
        guard state.info.completing == nil || state.info.isStored else { return false }
        return Date().timeIntervalSince1970 > expires(state, expiry: expiry)
    }

    /// When the upload `state` describes expires unless it is active again before, in
    /// seconds since 1970: `expiry` after its last activity (a state saved: an append, a
    /// completion), and ``maxLifetime`` after its creation at the latest.
    func expires(_ state: State, expiry: Duration) -> Double {
        let idle = (state.active ?? state.info.created) + Double(expiry.components.seconds)
        guard let maxLifetime else { return idle }
        return min(idle, state.info.created + maxLifetime)
    }

    /// The saved state of `id`, which has not expired (`expiry` after its last activity).
    ///
    /// - Throws: ``UploadStorageFailure/notFound`` for an unknown upload,
    ///   ``UploadStorageFailure/expired`` for an expired one (removed when no other request
    ///   holds it).
    func current(_ id: String, expiry: Duration) async throws -> State {
        guard let (state, _) = try await load(id) else { throw UploadStorageFailure.notFound }
        guard isExpired(state, expiry: expiry) else { return state }
        // Removed under its lease (a request holding it is at work: not expired), as read again.
        do {
            return try await holdingLease(id) { held in
                guard let (now, _) = try await load(id) else { throw UploadStorageFailure.notFound }
                try await removeIfExpired(id, now, expiry: expiry, holding: held)
                return now
            }
        } catch UploadStorageFailure.held {
            return state
        }
    }

    /// Removes the upload `id` if it has expired (a stored object stays), holding its
    /// lease (`held`).
    ///
    /// - Throws: ``UploadStorageFailure/expired`` when it had.
    func removeIfExpired(_ id: String, _ state: State, expiry: Duration, holding held: HeldLease) async throws {
        guard isExpired(state, expiry: expiry) else { return }
        try await remove(id, state: state, storedObject: false, holding: held)
        throw UploadStorageFailure.expired
    }
}
