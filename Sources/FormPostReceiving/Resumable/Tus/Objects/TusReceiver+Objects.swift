#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import HTTPTypes
import NIOCore
import Multipart
import ResumableHTTP

/// tus on object storage (``ReceiverConfiguration/objectStorage``): the same protocol, its
/// uploads kept in the bucket by ``ObjectUploadStore``, so that any receiver on the bucket can
/// answer any request of any upload. Every request that changes an upload — an append, a
/// completion, a removal — holds the upload's lease (423 while another receiver does);
/// `HEAD` and `GET` read its saved state, whose offset counts only bytes in parts or in its
/// tail object.
extension TusReceiver {
    /// Where tus uploads are kept in object storage: under `PREFIX.tus/`.
    typealias TusObjects = ObjectUploadStore<TusUploadInfo>

    /// `POST` on object storage: the upload begun (``ObjectUploadStore/start(_:info:)``),
    /// and `data`'s body appended as its first bytes, its checksum `expected`
    /// (creation-with-upload).
    func createObject(_ info: TusUploadInfo, data: ReceiverRequest?, expected: (algorithm: TusChecksumAlgorithm, digest: String)?,
                      in objects: TusObjects) async throws -> ReceiverResponse {
        // A partial upload's object is never a stored file: it is kept with the uploads' state.
        let id = try await admittedObject {
            try await objects.startAdmitted(info, client: info.client, expiry: expiry,
                                            key: info.concat == .partial ? { [prefix = objects.statePrefix] in prefix + $0 + ".partial" } : nil)
        }
        ReceiverMetrics.upload(.tus, .created)
        var response = ReceiverResponse(status: .created, headers: [.location: basePath + "/" + id, .uploadExpires: expiryDate(objects.newState(info), in: objects)])
        if let data {
            response.headers[.uploadOffset] = try await appendingFirstBytes(at: basePath + "/" + id) {
                try await appendObject(data, id: id, claimed: 0, expected: expected, in: objects)
            }
        } else if info.length == 0 {
            try await objects.holdingLease(id) { held in
                guard let (state, etag) = try await objects.load(id) else { throw ObjectUploadFailure.notFound }
                _ = try await objects.complete(id, state: state, etag: etag, parts: [], uploadID: nil, rest: ByteBuffer(), digest: SHA256Hasher(),
                                               holding: held, basePath: basePath, logger: logger)
            }
        }
        return response
    }

    /// The id `start` returns, its refusal by the limits of uploads in progress
    /// (``ObjectUploadStore/startAdmitted(_:client:expiry:key:beginningMultipart:)``)
    /// answered 503 as on the disk.
    func admittedObject(_ start: () async throws -> String) async throws -> String {
        do {
            return try await start()
        } catch let refusal as UploadAdmission.Refusal {
            throw TusFailure(.serviceUnavailable, refusal.message)
        }
    }

    /// `HEAD` on object storage: the saved offset. A recorded completion not yet finished
    /// is finished first; until it is (it fails, or another receiver holds the upload), the
    /// answer is 503 with `Retry-After`: the full length would tell the client that its
    /// upload is stored, and it would ask no more.
    func headObject(_ id: String, in objects: TusObjects) async throws -> ReceiverResponse {
        var state = try await objects.current(id, expiry: expiry)
        if state.info.isAwaiting(at: state.offset) {
            await joinAwaitedObject(id, in: objects)
            state = try await objects.current(id, expiry: expiry)
        }
        if state.info.completing != nil, state.info.file == nil {
            do {
                state = try await objects.finishHeld(id, basePath: basePath, logger: logger)
            } catch {
                throw TusFailure(.serviceUnavailable, "the upload is complete and still being stored: ask again")
            }
        }
        return Self.headAnswer(state.info, offset: state.offset, expires: expiryDate(state, in: objects), basePath: basePath)
    }

    /// `GET` on object storage: the state as JSON, with the receipt once complete.
    func stateObject(_ id: String, in objects: TusObjects) async throws -> ReceiverResponse {
        var state = try await objects.current(id, expiry: expiry)
        if state.info.isAwaiting(at: state.offset) {
            await joinAwaitedObject(id, in: objects)
            state = try await objects.current(id, expiry: expiry)
        }
        let answer = TusUploadState(length: state.info.length, offset: state.offset, complete: state.info.file != nil,
                                    receipt: state.info.file.map { Receipt(fields: [], files: [$0]) })
        var response = UploadReceiver.json(answer, status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `DELETE` on object storage, under the lease: its `post-terminate` event recorded,
    /// then everything of it removed but a stored object, which stays.
    func deleteObject(_ id: String, in objects: TusObjects) async throws -> ReceiverResponse {
        try await objects.holdingLease(id) { held in
            let state = try await objects.current(id, expiry: expiry)
            try held.check()
            try await objects.announce(state.info.event(basePath: basePath), as: nil, type: UploadEvent.postTerminate)
            // A stored file stays (the application was told of it); one whose completion
            // was begun and not finished was never told, and goes.
            try await objects.remove(id, state: state, storedObject: state.info.completing != nil && state.info.file == nil, holding: held)
        }
        digests.remove(id)
        return ReceiverResponse(status: .noContent)
    }

    /// `PATCH` on object storage, under the lease: the body taken after the upload's bytes
    /// (``ObjectUploadAppend``), then the state saved naming them — in parts and a new tail
    /// object, or, with the last byte, completed. A cut request's bytes count as they do on
    /// the disk; an append with a checksum counts only whole and matching.
    func appendObject(_ request: ReceiverRequest, id: String, claimed: Int64, expected: (algorithm: TusChecksumAlgorithm, digest: String)?,
                      in objects: TusObjects) async throws -> ReceiverResponse {
        let (response, awaiting, joinable) = try await objects.holdingLease(id) { held -> (ReceiverResponse, String?, Bool) in
            guard var (state, etag) = try await objects.load(id) else { throw ObjectUploadFailure.notFound }
            try await objects.removeIfExpired(id, state, expiry: expiry, holding: held)
            if case .final = state.info.concat { throw Self.finalTakesNoAppends }
            if state.info.completing != nil || state.info.file != nil {
                if state.info.file == nil { state = try await objects.finish(id, state: state, etag: etag, holding: held, basePath: basePath, logger: logger) }
                guard state.info.isWhole(at: claimed) else { throw TusFailure(.conflict, "the upload's offset is \(state.offset), not \(claimed)") }
                return (appendedObject(claimed, state: state, in: objects), nil, false)
            }
            let offset = state.offset
            guard claimed == offset else { throw TusFailure(.conflict, "the upload's offset is \(offset), not \(claimed)") }
            if let length = try Self.lengthDeclared(by: request.headers, for: state.info, at: offset, maxSize: maxSize) {
                state.info.length = length
                try held.check()
                etag = try await objects.save(state, id: id, replacing: etag)
            }
            let room = state.info.room(from: offset, limit: maxSize)
            if let declared = request.headers[.contentLength].flatMap(Int64.init), declared > room {
                throw Self.overflow(state.info, declared: declared, at: offset, maxSize: maxSize)
            }
            var digest = digests.take(id, at: offset)
            var checksum = expected.map { ChecksumHasher($0.algorithm) }
            var append = ObjectUploadAppend(store: objects, id: id, state: state, lease: held, room: room)
            defer { append.endMemory() }
            let outcome: ObjectUploadAppend<TusUploadInfo>.Outcome
            do {
                outcome = try await append.run(request.body, digest: &digest, checksum: &checksum)
            } catch {
                await append.abandon()
                throw error
            }
            if outcome.cut { logger.notice("PATCH \(request.loggedPath) cut at \(offset + outcome.received) bytes") }
            if let expected, outcome.cut || outcome.overflowed || checksum?.finalizeBase64() != expected.digest {
                // Nothing of it counts: the parts it sent are named by no state, and sent again.
                await append.abandon()
                if outcome.overflowed { throw Self.overflow(state.info, maxSize: maxSize) }
                throw TusFailure(.checksumMismatch, outcome.cut ? "the append was cut short: nothing of it was kept" : "the content does not match Upload-Checksum")
            }
            let reached = offset + outcome.received
            try held.check()
            if state.info.completes(at: reached) {
                state = try await objects.complete(id, state: state, etag: etag, parts: outcome.parts, uploadID: outcome.uploadID, rest: outcome.rest,
                                                   digest: digest, holding: held, basePath: basePath, logger: logger)
            } else if outcome.received > 0 {
                var written: TusObjects.State.Tail?
                do {
                    written = outcome.rest.readableBytes > 0 ? try await objects.writeTail(outcome.rest, id: id) : nil
                    var next = state
                    (next.parts, next.uploadID, next.tail) = (outcome.parts, outcome.uploadID, written)
                    try held.check()
                    etag = try await objects.save(next, id: id, replacing: etag)
                } catch {
                    await append.abandonUnsaved(tail: written)
                    throw error
                }
                if let old = state.tail { await objects.removeObject(old.key) }
                if let digest { digests.put(id, digest, offset: reached) }
            }
            if outcome.overflowed { throw Self.overflow(state.info, maxSize: maxSize) }
            if outcome.received > 0 { state.active = Date().timeIntervalSince1970 }
            return (appendedObject(reached, state: state, in: objects), state.info.joinedInto == nil ? state.info.awaitedBy : nil, state.info.isWhole(at: reached))
        }
        // A partial upload a final upload awaits: with its last bytes, that one is joined now;
        // before, it is kept as active as its partial uploads (it receives no byte of its own).
        if let awaiting { joinable ? await joinAwaitedObject(awaiting, in: objects) : await keepActive(awaiting: awaiting, in: objects) }
        return response
    }

    /// `Upload-Expires` of the upload `state` describes: when it expires unless active
    /// again (``ObjectUploadStore/expires(_:expiry:)``).
    func expiryDate(_ state: TusObjects.State, in objects: TusObjects) -> String {
        HTTPDate.string(secondsSince1970: objects.expires(state, expiry: expiry))
    }

    private func appendedObject(_ offset: Int64, state: TusObjects.State, in objects: TusObjects) -> ReceiverResponse {
        ReceiverResponse(status: .noContent, headers: [.uploadOffset: String(offset), .uploadExpires: expiryDate(state, in: objects)])
    }
}
