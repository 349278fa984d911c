#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Multipart
import NIOCore
import NIOPosix
import ResumableHTTP

extension TusReceiver {
    // MARK: - Requests

    func head(_ id: String) async throws -> ReceiverResponse {
        var (info, offset) = try await current(id)
        if info.isAwaiting(at: offset) {
            await joinAwaited(id)
            (info, offset) = try await current(id)
        }
        if info.file == nil, info.completes(at: offset), let token = locks.acquire(id) {
            // Every byte is there but an earlier attempt could not store it: the client
            // that reads this offset takes the upload for done, so it is stored first —
            // if the state read under the lock still says so.
            defer { locks.release(id, token: token) }
            (info, offset) = try await current(id, held: true)
            if info.file == nil, info.completes(at: offset) {
                try await completeNow(id, info: info, digest: digests.take(id, at: offset))
            }
        }
        return Self.headAnswer(info, offset: offset, expires: lifetime.httpDate(created: info.created), basePath: basePath)
    }

    func state(_ id: String) async throws -> ReceiverResponse {
        var (info, offset) = try await current(id)
        if info.isAwaiting(at: offset) {
            await joinAwaited(id)
            (info, offset) = try await current(id)
        }
        let state = TusUploadState(length: info.length, offset: offset, complete: info.file != nil,
                                   receipt: info.file.map { Receipt(fields: [], files: [$0]) })
        var response = UploadReceiver.json(state, status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    func delete(_ id: String) async throws -> ReceiverResponse {
        guard let token = await locks.acquireAfterBackground(id) else { throw TusFailure(.locked, "the upload is being appended to") }
        defer { locks.release(id, token: token) }
        // A completion that did not finish is not finished now: as the draft's, an upload
        // whose receipt no answer gave is removed whole, and only a stored one keeps its file.
        let (info, _) = try await current(id, held: true, finishing: false)
        let (store, ended) = (self.store, info.event(basePath: basePath))
        try await threadPool.runIfActive {
            // Recorded first: an end the application will not hear of is never answered.
            try store.announce(ended, as: nil, type: UploadEvent.postTerminate)
            // A stored file stays: the application was told of it (post-finish) and owns it.
            store.remove(id)
        }
        digests.remove(id)
        return ReceiverResponse(status: .noContent)
    }

    /// Appends the request's body at the upload's offset; bytes that reached the disk stay
    /// when the request is cut, unless it carries a checksum.
    func append(_ request: ReceiverRequest, id: String) async throws -> ReceiverResponse {
        guard request.headers[.contentType]?.lowercased() == "application/offset+octet-stream" else {
            throw TusFailure(.unsupportedMediaType, "an append's Content-Type is application/offset+octet-stream")
        }
        guard let offsetText = request.headers[.uploadOffset], let claimed = Int64(offsetText) else {
            throw TusFailure(.badRequest, "Upload-Offset is missing")
        }
        let expected = try request.headers[.uploadChecksum].map(Self.expectedChecksum)
        if let objects { return try await appendObject(request, id: id, claimed: claimed, expected: expected, in: objects) }
        guard let token = await locks.acquireAfterBackground(id) else { throw TusFailure(.locked, "another request is appending to this upload") }
        let (response, info, offset): (ReceiverResponse, TusUploadInfo, Int64)
        do {
            (response, info, offset) = try await appendHeld(request, id: id, claimed: claimed, expected: expected)
        } catch {
            locks.release(id, token: token)
            throw error
        }
        locks.release(id, token: token)
        // A partial upload a final upload awaits: with its last bytes, that one is joined now;
        // before, it is as active as its partial uploads (it receives no byte of its own).
        if let final = info.awaitedBy, info.joinedInto == nil {
            if info.isWhole(at: offset) {
                await joinAwaited(final)
            } else {
                let store = self.store
                try? await threadPool.runIfActive { store.touch(final) }
            }
        }
        return response
    }

    /// ``append(_:id:)`` once the request holds the upload `id` (or creates it, with its
    /// first bytes): from `claimed`, its checksum `expected`. The answer, with the upload as
    /// it was loaded and the offset reached.
    func appendHeld(_ request: ReceiverRequest, id: String, claimed: Int64,
                    expected: (algorithm: TusChecksumAlgorithm, digest: String)?) async throws -> (ReceiverResponse, TusUploadInfo, Int64) {
        let (loaded, offset) = try await current(id, held: true)
        if case .final = loaded.concat { throw Self.finalTakesNoAppends }
        guard claimed == offset else { throw TusFailure(.conflict, "the upload's offset is \(offset), not \(claimed)") }
        var info = loaded.verified == nil ? loaded : try await dropUnverified(id, info: loaded, at: offset)
        if let length = try Self.lengthDeclared(by: request.headers, for: info, at: offset, maxSize: maxSize) {
            info.length = length
            let (store, saved) = (self.store, info)
            try await threadPool.runIfActive { try store.save(saved, id: id) }
        }
        let room = info.room(from: offset, limit: maxSize)
        if let declared = request.headers[.contentLength].flatMap(Int64.init) {
            guard declared >= 0 else { throw TusFailure(.badRequest, "Content-Length is negative") }
            if declared > room { throw Self.overflow(info, declared: declared, at: offset, maxSize: maxSize) }
        }
        let store = self.store
        guard !info.isWhole(at: offset) else {
            // Every byte is there: store it now if an earlier attempt could not.
            if info.file == nil, info.completes(at: offset) { try await completeNow(id, info: info, digest: digests.take(id, at: offset)) }
            return (appended(offset, info: info), info, offset)
        }
        let descriptor = try await threadPool.runIfActive { try store.openForAppend(id) }
        if expected == nil {
            // Until the append's bytes are synced (or cut back), HEAD answers where it began:
            // bytes in the page cache are not yet acknowledged.
            unverified.begin(id, at: offset)
        }
        /// HEAD answers the data's size again: what the append kept is on the disk.
        func synced() { if expected == nil { try? unverified.end(id) {} } }
        defer { synced() }
        if expected != nil {
            do {
                try await beginUnverified(id, info: info, at: offset)
            } catch {
                close(descriptor)
                throw error
            }
        }
        let before = digests.take(id, at: offset)
        var digest = before
        var checksum = expected.map { ChecksumHasher($0.algorithm) }
        /// Undoes the append: nothing of it counts.
        func undo() async throws {
            try await endUnverified(id, info: info, undoingTo: offset)
            if let before { digests.put(id, before, offset: offset) }
        }
        let outcome = await BodyAppender(threadPool: threadPool)
            .append(request.body, to: descriptor, at: offset, limit: offset + room, digest: &digest, checksum: &checksum)
        if let failure = outcome.failure {
            if expected != nil {
                try? await undo()
            } else {
                // Nothing after the failed write counts: the data ends where the bytes written in order do.
                try? await threadPool.runIfActive { try store.cutBack(id, to: outcome.offset) }
                if let digest { digests.put(id, digest, offset: outcome.offset) }
                synced()
            }
            throw failure
        }
        // The bytes kept are synced: a HEAD while the upload is completed answers them all.
        synced()
        if outcome.cut { logger.notice("PATCH \(request.loggedPath) cut at \(outcome.offset) bytes") }
        if let expected, let checksum, outcome.cut || outcome.overflowed || checksum.finalizeBase64() != expected.digest {
            // Nothing of an append whose checksum does not hold counts, nor of one cut short.
            try await undo()
            if outcome.overflowed { throw Self.overflow(info, maxSize: maxSize) }
            throw TusFailure(.checksumMismatch, outcome.cut ? "the append was cut short: nothing of it was kept" : "the content does not match Upload-Checksum")
        }
        if expected != nil { try await endUnverified(id, info: info) }
        if info.completes(at: outcome.offset) {
            try await completeNow(id, info: info, digest: digest)
        } else if let digest {
            digests.put(id, digest, offset: outcome.offset)
        }
        // What went past Upload-Length was not written; the upload is whole all the same.
        if outcome.overflowed { throw Self.overflow(info, maxSize: maxSize) }
        return (appended(outcome.offset, info: info), info, outcome.offset)
    }

    /// Stores the complete upload `id`, whose SHA-256 `digest` covers every byte (or is
    /// read from its data when nil). When that fails, the completion is tried again
    /// (``CompletionRetries``) until it succeeds: a client may have read the full offset.
    func completeNow(_ id: String, info: TusUploadInfo, digest: SHA256Hasher?) async throws {
        let sha256 = digest.map { Hexadecimal.string($0.finalize()) }
        let receiver = self
        let done: TusUploadInfo
        do {
            done = try await threadPool.runIfActive { try Self.complete(id, info: info, sha256: sha256, in: receiver.store, basePath: receiver.basePath) }
        } catch {
            retries.add(id)
            throw error
        }
        retries.remove(id)
        logger.info("upload \(RequestLogLine.shortID(id)) complete: \(done.file?.storedAs ?? "") \(done.length ?? 0) bytes")
        ReceiverMetrics.upload(.tus, .completed)
    }

    /// Notes for a completion (``CompletionRetries``) the uploads whose every byte is there
    /// but that are not stored — a completion recorded, or data at the full length and no
    /// unverified append: a server stopped, or a completion failed, before it stored them.
    /// It reads the state of each upload in progress: at start.
    func findFullUploads() {
        for (id, entry) in store.census.all where !entry.complete && !entry.creating {
            guard let info = store.load(id, as: TusUploadInfo.self), info.file == nil else { continue }
            if info.completing != nil || (info.verified == nil && store.dataSize(id).map(info.completes) == true) { retries.add(id) }
        }
    }

    /// Tries again the completions of `retries` that no request holds now (one that does
    /// completes it itself). It blocks on the file system: at start, and in each sweep.
    static func completeFull(_ retries: CompletionRetries, in store: UploadStore, locks: UploadLocks, lifetime: UploadExpiry, logger: Logger,
                                     basePath: String) {
        for id in retries.all {
            guard let token = locks.acquire(id, background: true) else { continue }
            defer { locks.release(id, token: token) }
            do {
                if let done = try completeAgain(id, in: store, lifetime: lifetime, basePath: basePath) {
                    logger.info("upload \(RequestLogLine.shortID(id)) complete, its completion taken up again: \(done.file?.storedAs ?? "") \(done.length ?? 0) bytes")
                    ReceiverMetrics.upload(.tus, .completed)
                }
                retries.remove(id)
            } catch {
                logger.error("upload \(RequestLogLine.shortID(id)): completing it again failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
            }
        }
    }

    /// Stores the upload `id` if every byte of it is there and it is not stored yet (nor
    /// expired); returns it complete, or nil when there was nothing to store. It blocks on
    /// the file system; call it under the upload's lock.
    static func completeAgain(_ id: String, in store: UploadStore, lifetime: UploadExpiry, basePath: String) throws -> TusUploadInfo? {
        guard let info = store.load(id, as: TusUploadInfo.self), info.file == nil, info.verified == nil,
              !lifetime.hasExpired(id, created: info.created, in: store), store.dataSize(id).map(info.completes) == true else { return nil }
        return try complete(id, info: info, sha256: nil, in: store, basePath: basePath)
    }

    /// Notes that an append to `id` (described by `info`) from `offset` is written unverified:
    /// in its state, saved first (a server killed meanwhile leaves it), and in memory.
    func beginUnverified(_ id: String, info: TusUploadInfo, at offset: Int64) async throws {
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
    func endUnverified(_ id: String, info: TusUploadInfo, undoingTo offset: Int64? = nil) async throws {
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
    func dropUnverified(_ id: String, info: TusUploadInfo, at offset: Int64) async throws -> TusUploadInfo {
        var settled = info
        settled.verified = nil
        let (store, saved) = (self.store, settled)
        try await threadPool.runIfActive {
            try store.cutBack(id, to: offset)
            try store.save(saved, id: id)
        }
        return settled
    }

    /// The algorithm and digest of an `Upload-Checksum`.
    ///
    /// - Throws: ``TusFailure`` 400 when it is malformed or names an algorithm not supported.
    static func expectedChecksum(_ field: String) throws -> (algorithm: TusChecksumAlgorithm, digest: String) {
        guard let (name, digest) = TusChecksumAlgorithm.parseField(field) else {
            throw TusFailure(.badRequest, "Upload-Checksum is not an algorithm and a base64 digest")
        }
        guard let algorithm = TusChecksumAlgorithm(rawValue: name) else {
            throw TusFailure(.badRequest, "the checksum algorithm \(name) is not supported (\(checksumAlgorithms) are)")
        }
        return (algorithm, digest)
    }

    /// Stores the complete upload `id` in the directory (``UploadStore/complete(_:as:pending:done:)``)
    /// under the name and SHA-256 an earlier attempt recorded, or new ones (its SHA-256
    /// `sha256`, or read from its data when nil); returns its state, complete. It blocks on
    /// the file system. Its event names the creation's path, `basePath`.
    static func complete(_ id: String, info: TusUploadInfo, sha256: String?, in store: UploadStore, basePath: String) throws -> TusUploadInfo {
        let completion = try info.completing ?? store.plannedCompletion(id, sha256: sha256)
        var pending = info
        pending.completing = completion
        let done = info.completed(id: id, as: completion)
        try store.complete(id, as: completion, pending: pending, done: done, announcing: done.event(basePath: basePath))
        return done
    }

    func appended(_ offset: Int64, info: TusUploadInfo) -> ReceiverResponse {
        ReceiverResponse(status: .noContent, headers: [.uploadOffset: String(offset), .uploadExpires: lifetime.httpDate(created: info.created)])
    }
}
