#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import HTTPTypes
import NIOCore
import ResumableHTTP

/// The draft on object storage (``ReceiverConfiguration/objectStorage``): the same
/// protocol, its uploads kept in the bucket (``ObjectUploadStore``, under `PREFIX.resumable/`)
/// as tus's are, so that any receiver on the bucket can answer any request of any upload.
/// Every request that changes an upload — its creation's content, an append, a completion,
/// a removal — holds the upload's lease (423 while another receiver does); on this
/// receiver, a request on an upload another request still holds ends that request first,
/// as on the disk. `HEAD` and `GET` read the saved state, whose offset counts only bytes
/// in parts or in the tail object. A representation that is a form is refused (415): its
/// parse would have to be kept beside it; each file goes as a resumable upload of its own,
/// or the form in one request (``UploadReceiver`` streams its files into the bucket).
extension ResumableUploadReceiver {
    /// Where draft uploads are kept in object storage: under `PREFIX.resumable/`.
    typealias DraftObjects = ObjectUploadStore<DraftUploadInfo>

    /// A creation on object storage: the state saved (its multipart upload begun when its
    /// length says it will have parts), the resource announced in a `104`, then the
    /// request's content appended as a `PATCH` at offset 0 would be.
    func createObject(_ request: ReceiverRequest, info: DraftUploadInfo, completes: Bool, connection: (any ReceiverConnection)?, version: Int?,
                      in objects: DraftObjects) async throws -> ReceiverResponse {
        guard !info.isForm else {
            throw DraftFailure(.unsupportedMediaType, "a resumable multipart/form-data upload is not kept in object storage: "
                + "send each file as a resumable upload of its own, or the form in one request", complete: false)
        }
        let id: String
        do {
            id = try await objects.startAdmitted(info, client: info.client, expiry: expiry)
        } catch let refusal as UploadAdmission.Refusal {
            throw Self.admissionRefused(refusal)
        }
        ReceiverMetrics.upload(.ietf, .created)
        let location = basePath + "/" + id
        await announceResumption(at: location, info: info, connection: connection, version: version)
        return try await appendObject(request, id: id, claimed: 0, completes: completes, connection: connection, version: version, creating: true, in: objects)
    }

    /// A request on the upload resource `id` on object storage.
    func routeObject(_ request: ReceiverRequest, id: String, connection: (any ReceiverConnection)?, version: Int?, in objects: DraftObjects) async throws -> ReceiverResponse {
        switch request.method {
        case .head, .get: return try await stateObject(id, connection: connection, version: version, head: request.method == .head, in: objects)
        case .patch:
            let (claimed, completes) = try Self.appending(request, version: version)
            return try await appendObject(request, id: id, claimed: claimed, completes: completes, connection: connection, version: version,
                                          creating: false, in: objects)
        case .delete: return try await cancelObject(id, connection: connection, in: objects)
        case .options:
            let state = try await objects.current(id, expiry: expiry)
            return ReceiverResponse(status: .noContent, headers: [.allow: "HEAD, GET, PATCH, DELETE, OPTIONS",
                                                          .uploadLimit: limits(contentType: state.info.contentType, info: state.info).fieldValue(interopVersion: version)])
        default:
            throw DraftFailure(.methodNotAllowed, "an upload resource answers HEAD, GET, PATCH, DELETE and OPTIONS")
        }
    }

    /// `HEAD` and `GET` on object storage: the saved offset (`GET`: as JSON, or once
    /// complete the receipt again). A recorded completion not yet finished is finished
    /// first; until it is, the answer is 503 with `Retry-After`: a complete offset would
    /// tell the client that its upload is stored. A request on this receiver that still
    /// holds the upload is ended first, as on the disk: its bytes are then saved, and counted.
    private func stateObject(_ id: String, connection: (any ReceiverConnection)?, version: Int?, head: Bool, in objects: DraftObjects) async throws -> ReceiverResponse {
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        var state = try await objects.current(id, expiry: expiry)
        if state.info.completing != nil, !state.info.isStored {
            do {
                state = try await objects.finishHeld(id, basePath: basePath, logger: logger)
            } catch {
                var busy = UploadReceiver.json(ErrorBody(error: "the upload is complete and still being stored: ask again"), status: .serviceUnavailable)
                busy.headers[.retryAfter] = "1"
                throw DraftFailure(response: busy, complete: nil)
            }
        }
        if !head, let answer = state.info.answer { return replay(answer, version: version) }
        var headers: HTTPFields = [.uploadOffset: String(state.offset), .cacheControl: "no-store",
                                   .uploadLimit: limits(contentType: state.info.contentType, info: state.info).fieldValue(interopVersion: version)]
        if let length = state.info.length { headers[.uploadLength] = String(length) }
        DraftInterop.mark(&headers, complete: state.info.isStored, version: version)
        if head { return ReceiverResponse(status: .noContent, headers: headers) }
        var response = UploadReceiver.json(DraftUploadState(complete: false, length: state.info.length, offset: state.offset), status: .ok)
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    /// Appends the request's content to `id` at `claimed` under its lease (``ObjectUploadAppend``),
    /// then saves the state naming the bytes — in parts and a new tail object, or, with
    /// `Upload-Complete: ?1`, completed and stored. A cut request's bytes count.
    private func appendObject(_ request: ReceiverRequest, id: String, claimed: Int64, completes: Bool, connection: (any ReceiverConnection)?, version: Int?,
                              creating: Bool, in objects: DraftObjects) async throws -> ReceiverResponse {
        try await holding(id, connection: connection, in: objects) { held in
            guard let (loaded, etag) = try await objects.load(id) else { throw UploadStorageFailure.notFound }
            var state = loaded
            try await objects.removeIfExpired(id, state, expiry: expiry, holding: held)
            if state.info.completing != nil, !state.info.isStored {
                state = try await objects.finish(id, state: state, etag: etag, holding: held, basePath: basePath, logger: logger)
            }
            let location = basePath + "/" + id
            let offset = state.offset
            guard claimed == offset else { throw Self.mismatchingOffset(expected: offset, provided: claimed) }
            if let answer = state.info.answer {
                // The final answer of a complete upload, again: for a client that lost it.
                guard completes, (request.headers[.contentLength].flatMap(Int64.init) ?? 0) == 0 else {
                    throw DraftFailure(.badRequest, "the upload is complete: nothing can be appended", complete: false)
                }
                return replay(answer, version: version)
            }
            let limit = limits(contentType: state.info.contentType, info: state.info).maxSize ?? Int64.max
            let length = try Self.length(of: request, offset: offset, completes: completes, known: state.info.length)
            if let length, length > limit { throw tooLarge(contentType: state.info.contentType, version: version) }
            let learned = state.info.length == nil && length != nil
            state.info.length = state.info.length ?? length
            var digest = digests.take(id, at: offset)
            var checksum: ChecksumHasher?
            var append = ObjectUploadAppend(store: objects, id: id, state: state, lease: held, room: (state.info.length ?? limit) - offset)
            defer { append.endMemory() }
            let outcome: ObjectUploadAppend<DraftUploadInfo>.Outcome
            do {
                outcome = try await append.run(request.body, digest: &digest, checksum: &checksum)
            } catch {
                await append.abandon()
                throw error
            }
            if outcome.overflowed {
                // Its offset may not pass its length: the upload is removed, as on the disk.
                await append.abandon()
                try await objects.remove(id, state: state, storedObject: false, holding: held)
                digests.remove(id)
                throw DraftFailure(.contentTooLarge, "the content goes past the upload's length of \(state.info.length ?? limit) bytes: the upload is removed")
            }
            let reached = offset + outcome.received
            var written: DraftObjects.State.Tail?
            do {
                try held.check()
                if completes, !outcome.cut, state.info.length ?? reached == reached {
                    state.info.length = reached
                    let done = try await objects.complete(id, state: state, etag: etag, parts: outcome.parts, uploadID: outcome.uploadID,
                                                          rest: outcome.rest, digest: digest, holding: held, basePath: basePath, logger: logger)
                    digests.remove(id)
                    var response = replay(done.info.answer!, version: version)
                    response.headers[.location] = location
                    return response
                }
                if outcome.received > 0 || learned {
                    written = outcome.rest.readableBytes > 0 ? try await objects.writeTail(outcome.rest, id: id) : nil
                    var next = state
                    (next.parts, next.uploadID, next.tail) = (outcome.parts, outcome.uploadID, written)
                    try held.check()
                    _ = try await objects.save(next, id: id, replacing: etag)
                    if let old = state.tail, old != written { await objects.removeObject(old.key) }
                    if let digest { digests.put(id, digest, offset: reached) }
                }
            } catch {
                // A multipart upload begun by this append (a length not known at creation),
                // and the tail it wrote, are not left behind unnamed.
                await append.abandonUnsaved(tail: written)
                throw error
            }
            if outcome.cut {
                logger.notice("\(request.method) \(request.loggedPath) cut at \(reached) bytes; upload \(RequestLogLine.shortID(id)) kept")
                throw DraftFailure(.badRequest, creating ? "the request was cut short; its upload goes on at \(location)" : "the request was cut short",
                                   complete: false)
            }
            if completes {
                throw DraftFailure(response: Self.problem(.inconsistentLength("the upload was completed at \(reached) bytes, not at its length of \(state.info.length ?? 0)")),
                                   complete: false)
            }
            var headers: HTTPFields = [.uploadOffset: String(reached),
                                       .uploadLimit: limits(contentType: state.info.contentType, info: state.info).fieldValue(interopVersion: version)]
            if creating { headers[.location] = location }
            DraftInterop.mark(&headers, complete: false, version: version)
            return ReceiverResponse(status: creating ? .created : .noContent, headers: headers)
        }
    }

    /// `DELETE` on object storage, under the lease: its `post-terminate` event recorded,
    /// then what the upload keeps removed (a stored object stays: it is the target's; the
    /// object of a completion not finished goes with it).
    private func cancelObject(_ id: String, connection: (any ReceiverConnection)?, in objects: DraftObjects) async throws -> ReceiverResponse {
        try await holding(id, connection: connection, in: objects) { held in
            let state = try await objects.current(id, expiry: expiry)
            try held.check()
            try await objects.announce(state.info.finishedEvent(basePath: basePath), as: nil, type: UploadEvent.postTerminate)
            // A completion recorded and not finished may have made its object: no receipt names it.
            try await objects.remove(id, state: state, storedObject: state.info.completing != nil && !state.info.isStored, holding: held)
        }
        digests.remove(id)
        return ReceiverResponse(status: .noContent)
    }

    /// Runs `body` holding `id` on this receiver (ending a request that still holds it, as
    /// on the disk) and its lease in the store.
    ///
    /// - Throws: ``DraftFailure`` 423 while another request holds it; what `body` throws.
    private func holding<T>(_ id: String, connection: (any ReceiverConnection)?, in objects: DraftObjects, _ body: (HeldLease) async throws -> T) async throws -> T {
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        return try await objects.holdingLease(id, body)
    }
}
