#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import HTTPTypes
import Hummingbird
import Multipart
import ResumableHTTP

/// tus on object storage (``ReceiverConfiguration/objectStorage``): the same protocol, its
/// uploads kept in the bucket by ``TusObjectStore``, so that any receiver on the bucket can
/// answer any request of any upload. Every request that changes an upload — an append, a
/// completion, a removal — holds the upload's lease (423 while another receiver does);
/// `HEAD` and `GET` read its saved state, whose offset counts only bytes in parts or in its
/// tail object.
extension TusReceiver {
    /// `POST` on object storage: the state saved, the upload's object key chosen, and its
    /// multipart upload begun when it will have parts.
    func createObject(_ info: TusUploadInfo, in objects: TusObjectStore) async throws -> Response {
        let id = UploadStore.randomName()
        var state = objects.newState(info)
        if info.length >= Int64(objects.partSize) {
            // It will have parts: its multipart upload is begun now and named by its first
            // state, so that an append that dies after sending a part leaves none unnamed.
            state.uploadID = try await objects.beginMultipart(state)
        }
        do {
            try await objects.create(state, id: id)
        } catch {
            if let uploadID = state.uploadID { await objects.abort(uploadID, key: state.key) }
            throw error
        }
        ReceiverMetrics.upload(.tus, .created)
        if info.length == 0 {
            try await holdingLease(id, in: objects) {
                guard let (state, etag) = try await objects.load(id) else { throw TusFailure(.notFound, "no such upload") }
                _ = try await completeObject(id, state: state, etag: etag, parts: [], uploadID: nil, rest: ByteBuffer(), digest: SHA256Hasher(), in: objects)
            }
        }
        return Response(status: .created, headers: [.location: basePath + "/" + id, .uploadExpires: expiryDate(info)])
    }

    /// `HEAD` on object storage: the saved offset. A recorded completion not yet finished
    /// is finished first; until it is (it fails, or another receiver holds the upload), the
    /// answer is 503 with `Retry-After`: the full length would tell the client that its
    /// upload is stored, and it would ask no more.
    func headObject(_ id: String, in objects: TusObjectStore) async throws -> Response {
        var state = try await currentObject(id, in: objects)
        if state.info.completing != nil, state.info.file == nil {
            do {
                state = try await finishHeld(id, in: objects)
            } catch {
                throw TusFailure(.serviceUnavailable, "the upload is complete and still being stored: ask again")
            }
        }
        var headers: HTTPFields = [
            .uploadOffset: String(state.offset), .uploadLength: String(state.info.length),
            .cacheControl: "no-store", .uploadExpires: expiryDate(state.info),
        ]
        if let metadata = state.info.metadata { headers[.uploadMetadata] = metadata }
        return Response(status: .ok, headers: headers)
    }

    /// `GET` on object storage: the state as JSON, with the receipt once complete.
    func stateObject(_ id: String, in objects: TusObjectStore) async throws -> Response {
        let state = try await currentObject(id, in: objects)
        let answer = TusUploadState(length: state.info.length, offset: state.offset, complete: state.info.file != nil,
                                    receipt: state.info.file.map { Receipt(fields: [], files: [$0]) })
        var response = UploadReceiver.json(answer, status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `DELETE` on object storage, under the lease: its `post-terminate` event recorded,
    /// then everything of it removed, its stored object too.
    func deleteObject(_ id: String, in objects: TusObjectStore) async throws -> Response {
        try await holdingLease(id, in: objects) {
            let state = try await currentObject(id, in: objects)
            try await objects.announce(state.info.event(basePath: basePath), as: nil, type: UploadEvent.postTerminate)
            await objects.remove(id, state: state, storedObject: state.info.file != nil || state.info.completing != nil)
        }
        digests.remove(id)
        return Response(status: .noContent)
    }

    /// `PATCH` on object storage, under the lease: the body taken after the upload's bytes
    /// (``TusObjectAppend``), then the state saved naming them — in parts and a new tail
    /// object, or, with the last byte, completed. A cut request's bytes count as they do on
    /// the disk; an append with a checksum counts only whole and matching.
    func appendObject(_ request: Request, id: String, claimed: Int64, expected: (algorithm: TusChecksumAlgorithm, digest: String)?,
                      in objects: TusObjectStore) async throws -> Response {
        try await holdingLease(id, in: objects) { (held: HeldLease) in
            guard var (state, etag) = try await objects.load(id) else { throw TusFailure(.notFound, "no such upload") }
            try await removeIfExpired(id, state, in: objects)
            if state.info.completing != nil || state.info.file != nil {
                if state.info.file == nil { state = try await finishObject(id, state: state, etag: etag, in: objects) }
                guard claimed == state.info.length else { throw TusFailure(.conflict, "the upload's offset is \(state.info.length), not \(claimed)") }
                return appendedObject(state.info.length, info: state.info)
            }
            let offset = state.offset
            guard claimed == offset else { throw TusFailure(.conflict, "the upload's offset is \(offset), not \(claimed)") }
            if let declared = request.headers[.contentLength].flatMap(Int64.init), declared > state.info.length - offset {
                throw TusFailure(.contentTooLarge, "\(declared) bytes at offset \(offset) exceed Upload-Length \(state.info.length)")
            }
            var digest = digests.take(id, at: offset)
            var checksum = expected.map { ChecksumHasher($0.algorithm) }
            var append = TusObjectAppend(store: objects, id: id, state: state, lease: held)
            let outcome: TusObjectAppend.Outcome
            do {
                outcome = try await append.run(request.body, digest: &digest, checksum: &checksum)
            } catch {
                await append.abandon()
                throw error
            }
            if outcome.cut { logger.notice("PATCH \(request.uri.path) cut at \(offset + outcome.received) bytes") }
            if let expected, outcome.cut || outcome.overflowed || checksum?.finalizeBase64() != expected.digest {
                // Nothing of it counts: the parts it sent are named by no state, and sent again.
                await append.abandon()
                if outcome.overflowed { throw TusFailure(.contentTooLarge, "the append goes past Upload-Length \(state.info.length)") }
                throw TusFailure(.checksumMismatch, outcome.cut ? "the append was cut short: nothing of it was kept" : "the content does not match Upload-Checksum")
            }
            let reached = offset + outcome.received
            try held.check()
            if reached == state.info.length {
                state = try await completeObject(id, state: state, etag: etag, parts: outcome.parts, uploadID: outcome.uploadID, rest: outcome.rest,
                                                 digest: digest, in: objects)
            } else if outcome.received > 0 {
                let tail = outcome.rest.readableBytes > 0 ? try await objects.writeTail(outcome.rest, id: id) : nil
                var next = state
                (next.parts, next.uploadID, next.tail) = (outcome.parts, outcome.uploadID, tail)
                try held.check()
                etag = try await objects.save(next, id: id, replacing: etag)
                if let old = state.tail { await objects.removeObject(old.key) }
                if let digest { digests.put(id, digest, offset: reached) }
            }
            if outcome.overflowed { throw TusFailure(.contentTooLarge, "the append goes past Upload-Length \(state.info.length)") }
            return appendedObject(reached, info: state.info)
        }
    }

    /// Completes `id`, whose every byte is in `parts` (of `uploadID`) and `rest`: the rest
    /// sent as the last part (or, with no part, the whole upload as one object), the
    /// completion recorded in its state, then finished (``finishObject(_:state:etag:in:)``).
    private func completeObject(_ id: String, state: TusObjectState, etag: String, parts: [TusObjectState.Part], uploadID: String?,
                                rest: ByteBuffer, digest: SHA256Hasher?, in objects: TusObjectStore) async throws -> TusObjectState {
        var next = state
        (next.parts, next.uploadID, next.tail) = (parts, uploadID, nil)
        var sha256 = digest.map { Hexadecimal.string($0.finalize()) }
        if let uploadID {
            if rest.readableBytes > 0 {
                next.parts.append(try await objects.sendPart(rest, number: parts.count + 1, key: state.key, uploadID: uploadID))
            }
        } else {
            // Fewer bytes than a part in all: they are all here.
            var hasher = SHA256Hasher()
            rest.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            sha256 = Hexadecimal.string(hasher.finalize())
            try await objects.putWhole(rest, state: next, sha256: sha256!)
        }
        next.info.completing = UploadCompletion(storedAs: state.key, sha256: sha256 ?? "", event: UploadEventOutbox.newID())
        let saved = try await objects.save(next, id: id, replacing: etag)
        if let old = state.tail { await objects.removeObject(old.key) }
        return try await finishObject(id, state: next, etag: saved, in: objects)
    }

    /// Finishes the recorded completion of `id`, each step of which may be taken again:
    /// the object made from its parts, its SHA-256 (read back when no running hash covered
    /// every byte) tagged on it, its `post-finish` event recorded, its state saved complete.
    private func finishObject(_ id: String, state: TusObjectState, etag: String, in objects: TusObjectStore) async throws -> TusObjectState {
        guard let completion = state.info.completing else { return state }
        do {
            try await objects.completeMultipart(state)
            let sha256 = completion.sha256.isEmpty ? try await objects.sha256(of: state.key) : completion.sha256
            if state.uploadID != nil { try await objects.tag(state.key, sha256: sha256) }
            var done = state
            done.info = state.info.completed(id: id, as: UploadCompletion(storedAs: state.key, sha256: sha256, event: completion.event),
                                             bucket: objects.client.storage.bucket)
            try await objects.announce(done.info.event(basePath: basePath), as: completion.event)
            _ = try await objects.save(done, id: id, replacing: etag)
            logger.info("upload \(id) complete: \(state.key) \(state.info.length) bytes")
            ReceiverMetrics.upload(.tus, .completed)
            return done
        } catch {
            logger.error("upload \(id): storing it failed, to be tried again by its next request: \(error)")
            throw error
        }
    }

    /// Finishes a recorded completion of `id` if no other receiver holds it; the state.
    private func finishHeld(_ id: String, in objects: TusObjectStore) async throws -> TusObjectState {
        try await holdingLease(id, in: objects) {
            guard let (state, etag) = try await objects.load(id) else { throw TusFailure(.notFound, "no such upload") }
            return try await finishObject(id, state: state, etag: etag, in: objects)
        }
    }

    /// The saved state of `id`.
    ///
    /// - Throws: ``TusFailure`` 404 for an unknown upload, 410 for an expired one (removed
    ///   when no other request holds it).
    private func currentObject(_ id: String, in objects: TusObjectStore) async throws -> TusObjectState {
        guard let (state, _) = try await objects.load(id) else { throw TusFailure(.notFound, "no such upload") }
        guard isExpired(state) else { return state }
        // Removed under its lease (a request holding it is at work: not expired), as read again.
        do {
            return try await holdingLease(id, in: objects) {
                guard let (now, _) = try await objects.load(id) else { throw TusFailure(.notFound, "no such upload") }
                try await removeIfExpired(id, now, in: objects)
                return now
            }
        } catch let failure as TusFailure where failure.status == .locked {
            return state
        }
    }

    /// Whether the upload `state` describes has had no activity for ``expiry`` (no state
    /// saved: no append, no completion). One whose completion is recorded never expires:
    /// its next request finishes it.
    private func isExpired(_ state: TusObjectState) -> Bool {
        guard state.info.completing == nil || state.info.file != nil else { return false }
        return Date().timeIntervalSince1970 > (state.active ?? state.info.created) + Double(expiry.components.seconds)
    }

    /// Removes the upload `id` if it has expired (its stored object stays), and answers
    /// 410; call it holding its lease.
    private func removeIfExpired(_ id: String, _ state: TusObjectState, in objects: TusObjectStore) async throws {
        guard isExpired(state) else { return }
        await objects.remove(id, state: state, storedObject: false)
        throw TusFailure(.gone, "the upload expired")
    }

    /// Runs `body` holding the lease of `id`, renewed in the background while it runs
    /// (``HeldLease``), and released after it.
    ///
    /// - Throws: ``TusFailure`` 423 while another receiver holds it; what `body` throws.
    private func holdingLease<T>(_ id: String, in objects: TusObjectStore, _ body: (HeldLease) async throws -> T) async throws -> T {
        guard let lease = try await objects.lease(id) else {
            throw TusFailure(.locked, "another request is changing this upload (here or on another receiver)")
        }
        let held = HeldLease(lease)
        let renewing = Task { await held.keepRenewing(for: objects.leaseSeconds, with: objects.client) }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(held))
        } catch {
            result = .failure(error)
        }
        renewing.cancel()
        await renewing.value
        await held.lease.release(with: objects.client)
        return try result.get()
    }

    private func holdingLease<T>(_ id: String, in objects: TusObjectStore, _ body: () async throws -> T) async throws -> T {
        try await holdingLease(id, in: objects) { (_: HeldLease) in try await body() }
    }

    private func expiryDate(_ info: TusUploadInfo) -> String {
        lifetime.httpDate(created: info.created)
    }

    private func appendedObject(_ offset: Int64, info: TusUploadInfo) -> Response {
        Response(status: .noContent, headers: [.uploadOffset: String(offset), .uploadExpires: expiryDate(info)])
    }
}
