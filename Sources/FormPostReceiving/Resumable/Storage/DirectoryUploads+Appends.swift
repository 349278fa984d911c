#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
import Multipart

/// Appending to an upload in the directory, and storing it once complete.
extension DirectoryUploads {
    /// Appends `body` to the upload's data file as it arrives (``BodyAppender``). Until
    /// the bytes are synced (or, `verifying`, kept), its offset is still where the append
    /// began: bytes in the page cache are not yet acknowledged. When a write fails, the data
    /// is cut back to where the bytes written in order end — to where the append began,
    /// `verifying` — and the failure thrown.
    func append(_ body: ReceiverRequestBody, to upload: DirectoryUpload<Info>, id: String, room: Int64, verifying: Bool,
                checksum: inout ChecksumHasher?, holding: UInt64) async throws -> WrittenAppend<DirectoryAppend> {
        let (store, offset) = (self.store, upload.offset)
        let descriptor = try await threadPool.runIfActive { try store.openForAppend(id) }
        if !verifying { unverified.begin(id, at: offset) }
        /// Its offset is the data's size again: what the append kept is on the disk.
        func synced() { if !verifying { try? unverified.end(id) {} } }
        defer { synced() }
        if verifying {
            do {
                try await beginUnverified(id, info: upload.info, at: offset)
            } catch {
                close(descriptor)
                throw error
            }
        }
        let before = digests.take(id, at: offset)
        var digest = before
        let outcome = await BodyAppender(threadPool: threadPool)
            .append(body, to: descriptor, at: offset, limit: offset + room, digest: &digest, checksum: &checksum)
        if let failure = outcome.failure {
            if verifying {
                try? await endUnverified(id, info: upload.info, undoingTo: offset)
                if let before { digests.put(id, before, offset: offset) }
            } else {
                // Nothing after the failed write counts: the data ends where the bytes written in order do.
                try? await threadPool.runIfActive { try store.cutBack(id, to: outcome.offset) }
                if let digest { digests.put(id, digest, offset: outcome.offset) }
            }
            throw failure
        }
        return WrittenAppend(received: outcome.offset - offset, cut: outcome.cut, overflowed: outcome.overflowed,
                             pending: DirectoryAppend(before: before, digest: digest, verifying: verifying))
    }

    func keep(_ written: WrittenAppend<DirectoryAppend>, of upload: DirectoryUpload<Info>, id: String, completing: Bool,
              holding: UInt64) async throws -> DirectoryUpload<Info> {
        let reached = upload.offset + written.received
        if written.pending.verifying { try await endUnverified(id, info: upload.info) }
        if completing { return DirectoryUpload(info: try await completeNow(id, info: upload.info, digest: written.pending.digest), offset: reached) }
        if let digest = written.pending.digest { digests.put(id, digest, offset: reached) }
        return DirectoryUpload(info: upload.info, offset: reached)
    }

    func discard(_ written: WrittenAppend<DirectoryAppend>, of upload: DirectoryUpload<Info>, id: String, holding: UInt64) async throws {
        if written.pending.verifying {
            try await endUnverified(id, info: upload.info, undoingTo: upload.offset)
        } else {
            let store = self.store
            try await threadPool.runIfActive { try store.cutBack(id, to: upload.offset) }
        }
        if let before = written.pending.before { digests.put(id, before, offset: upload.offset) }
    }

    /// Stores the upload now (``completeNow(_:info:digest:)``), its running SHA-256 used
    /// when it covers every byte.
    func finish(_ upload: DirectoryUpload<Info>, id: String, holding: UInt64) async throws -> DirectoryUpload<Info> {
        DirectoryUpload(info: try await completeNow(id, info: upload.info, digest: digests.take(id, at: upload.offset)), offset: upload.offset)
    }

    /// Stores the complete upload `id`, whose SHA-256 `digest` covers every byte (or is
    /// read from its data when nil); returns it stored. When that fails, the completion is
    /// tried again (``CompletionRetries``) until it succeeds: a client may have read the
    /// full offset.
    func completeNow(_ id: String, info: Info, digest: SHA256Hasher?) async throws -> Info {
        let sha256 = digest.map { Hexadecimal.string($0.finalize()) }
        let (store, basePath) = (self.store, self.basePath)
        let done: Info
        do {
            done = try await threadPool.runIfActive { try Self.complete(id, info: info, sha256: sha256, in: store, basePath: basePath) }
        } catch {
            retries.add(id)
            throw error
        }
        retries.remove(id)
        logger.info("upload \(RequestLogLine.shortID(id)) complete: \(storedName(of: done)) \(done.knownLength ?? 0) bytes")
        ReceiverMetrics.upload(Info.uploadProtocol, .completed)
        return done
    }

    /// The name the stored upload `info` has in the directory, as logged.
    func storedName(of info: Info) -> String {
        info.finishedEvent(basePath: basePath).receipt.files.first?.storedAs ?? ""
    }

    /// Stores the complete upload `id` in the directory (``UploadStore/complete(_:as:pending:done:announcing:)``)
    /// under the name and SHA-256 an earlier attempt recorded, or new ones (its SHA-256
    /// `sha256`, or read from its data when nil); returns its state, stored. It blocks on
    /// the file system. Its event names the creation's path, `basePath`.
    static func complete(_ id: String, info: Info, sha256: String?, in store: UploadStore, basePath: String) throws -> Info {
        let completion = try info.completing ?? store.plannedCompletion(id, sha256: sha256)
        var pending = info
        pending.completing = completion
        let done = info.stored(id: id, as: completion, bucket: nil)
        try store.complete(id, as: completion, pending: pending, done: done, announcing: done.finishedEvent(basePath: basePath))
        return done
    }

    /// Notes that an append to `id` (described by `info`) from `offset` is written unverified:
    /// in its state, saved first (a server killed meanwhile leaves it), and in memory.
    func beginUnverified(_ id: String, info: Info, at offset: Int64) async throws {
        var unchecked = info
        unchecked.verified = offset
        let (store, unverified, saved) = (self.store, self.unverified, unchecked)
        try await threadPool.runIfActive {
            try store.save(saved, id: id)
            unverified.begin(id, at: offset)
        }
    }

    /// Ends the unverified append to `id`: its state is saved as `info` (no unverified
    /// append), after its data is cut back to `undoingTo` when its bytes must not count.
    /// When that fails, the state still says the append is unverified: its bytes count for
    /// nothing, and the next append cuts them off.
    func endUnverified(_ id: String, info: Info, undoingTo offset: Int64? = nil) async throws {
        let (store, unverified) = (self.store, self.unverified)
        try await threadPool.runIfActive {
            try unverified.end(id) {
                if let offset { try store.cutBack(id, to: offset) }
                try store.save(info, id: id)
            }
        }
    }

    /// Cuts the data of `id` back to `offset`, dropping what an unverified append left
    /// there — one whose server stopped before its checksum was checked, or whose end could
    /// not be saved: its bytes never counted — and saves `info` without it; returns that.
    func dropUnverified(_ id: String, info: Info, at offset: Int64) async throws -> Info {
        var settled = info
        settled.verified = nil
        let (store, saved) = (self.store, settled)
        try await threadPool.runIfActive {
            try store.cutBack(id, to: offset)
            try store.save(saved, id: id)
        }
        return settled
    }
}
