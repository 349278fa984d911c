#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// The draft's requests, written once against ``UploadStorage``: the same on the directory
/// and on object storage. A request on an upload that another request on this receiver
/// still holds ends that request first (``UploadHoldClaim/endingHolder(connection:)``).
extension ResumableUploadReceiver {
    // MARK: - Requests

    /// A request to a target that asks for a resumable upload: the upload resource is
    /// created for `client` (its address) if the admission limits take it (and announced at
    /// once in a 104), then the request's content appended as a `PATCH` at offset 0 would be.
    func create(_ request: ReceiverRequest, connection: (any ReceiverConnection)?, client: String?, granted: [String: String]?, version: Int?,
                in uploads: some UploadStorage<DraftUploadInfo>) async throws -> ReceiverResponse {
        guard request.method == .post || request.method == .put else {
            throw DraftFailure(.methodNotAllowed, "a resumable upload is created with POST or PUT")
        }
        guard let completes = DraftInterop.completes(request.headers, version: version) else {
            throw DraftFailure(.badRequest, "Upload-Complete is not a Boolean (?0 or ?1)")
        }
        let contentType = request.headers[.contentType] ?? MIMEType.octetStream
        let contentLength = request.headers[.contentLength].flatMap(Int64.init)
        let length = try Self.length(of: request, offset: 0, completes: completes, known: nil)
        let limit = limits(contentType: contentType, info: nil).maxSize ?? Int64.max
        if let length, length > limit { throw tooLarge(contentType: contentType, version: version) }
        if let contentLength, contentLength > limit { throw tooLarge(contentType: contentType, version: version) }
        var info = DraftUploadInfo(created: Date().timeIntervalSince1970, length: length, method: request.method.rawValue, path: request.path,
                                   contentType: contentType, contentDisposition: request.headers[.contentDisposition])
        info.client = client
        info.granted = granted
        guard takesForms || !info.isForm else {
            throw DraftFailure(.unsupportedMediaType, "a resumable multipart/form-data upload is not kept in object storage: "
                + "send each file as a resumable upload of its own, or the form in one request", complete: false)
        }
        do {
            return try await uploads.creating(info, client: client, claim: .endingHolder(connection: connection)) { id, hold in
                ReceiverMetrics.upload(.ietf, .created)
                await announceResumption(at: basePath + "/" + id, info: info, connection: connection, version: version)
                return try await appendHeld(request, id: id, claimed: 0, completes: completes, version: version, creating: true, in: uploads, holding: hold)
            }
        } catch let refusal as UploadAdmission.Refusal {
            throw Self.admissionRefused(refusal)
        }
    }

    /// Tells a client that speaks a supported interop version where its new upload
    /// resource is, in a `104` interim response, before its body is read.
    func announceResumption(at location: String, info: DraftUploadInfo, connection: (any ReceiverConnection)?, version: Int?) async {
        guard let connection, let version, DraftInterop.supported.contains(version) else { return }
        await connection.sendInterim(.uploadResumptionSupported, fields: [
            .location: location, .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version),
            .uploadDraftInteropVersion: String(version),
        ])
    }

    /// Where an upload stands: `HEAD` (no content) and `GET` (its state as JSON, or once
    /// complete the target's answer again). A recorded completion not yet finished is
    /// finished first; until it is, the answer is 503 with `Retry-After` (a complete offset
    /// would tell the client that its upload is stored) — but in a store that completes in
    /// the background (``UploadStorage/completesInBackground``), its offset.
    func state(_ id: String, connection: (any ReceiverConnection)?, version: Int?, head: Bool,
               in uploads: some UploadStorage<DraftUploadInfo>) async throws -> ReceiverResponse {
        var upload = try await uploads.reading(id, claim: .endingHolder(connection: connection))
        if upload.info.completing != nil, !upload.info.isStored {
            do {
                upload = try await uploads.finishing(id, claim: .endingHolder(connection: connection)) { $0.info.completing != nil && !$0.info.isStored }
            } catch let failure as UploadStorageFailure where failure == .notFound || failure == .expired || failure == .lost {
                throw failure
            } catch where !uploads.completesInBackground {
                var busy = UploadReceiver.json(ErrorBody(error: "the upload is complete and still being stored: ask again"), status: .serviceUnavailable)
                busy.headers[.retryAfter] = "1"
                throw DraftFailure(response: busy, complete: nil)
            } catch {
                // Taken up again by the store's retries, and by the client's next append.
            }
        }
        let (info, offset) = (upload.info, upload.offset)
        if !head, let answer = info.answer { return replay(answer, version: version) }
        var headers: HTTPFields = [.uploadOffset: String(offset), .cacheControl: "no-store",
                                   .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)]
        if let length = info.length { headers[.uploadLength] = String(length) }
        DraftInterop.mark(&headers, complete: info.answer != nil, version: version)
        if head { return ReceiverResponse(status: .noContent, headers: headers) }
        var response = UploadReceiver.json(DraftUploadState(complete: false, length: info.length, offset: offset), status: .ok)
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    /// `OPTIONS` on an upload resource: its limits, from its state read without holding it.
    func options(_ id: String, version: Int?, in uploads: some UploadStorage<DraftUploadInfo>) async throws -> ReceiverResponse {
        let info = try await uploads.current(id, holding: nil, finishing: false).info
        return ReceiverResponse(status: .noContent, headers: [.allow: "HEAD, GET, PATCH, DELETE, OPTIONS",
                                                              .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)])
    }

    /// The offset an append claims and whether it completes the upload, from its fields.
    ///
    /// - Throws: ``DraftFailure`` 415 for an append of another media type than the
    ///   version's, 400 without a valid `Upload-Offset` or `Upload-Complete`.
    static func appending(_ request: ReceiverRequest, version: Int?) throws -> (claimed: Int64, completes: Bool) {
        if DraftInterop.requiresPartialUploadType(version) {
            let type = (request.headers[.contentType] ?? "").split(separator: ";").first.map { $0.trimmingOptionalWhitespace().lowercased() }
            guard type == DraftInterop.partialUpload else {
                throw DraftFailure(.unsupportedMediaType, "an append's Content-Type is \(DraftInterop.partialUpload)")
            }
        }
        guard let claimed = StructuredField.integer(request.headers[.uploadOffset]) else {
            throw DraftFailure(.badRequest, "Upload-Offset is missing or not a non-negative integer")
        }
        guard let completes = DraftInterop.completes(request.headers, version: version) else {
            throw DraftFailure(.badRequest, "Upload-Complete is missing or not a Boolean (?0 or ?1)")
        }
        return (claimed, completes)
    }

    /// The answer to an append that claims another offset than the upload's: 409, the
    /// problem document, and the offset.
    static func mismatchingOffset(expected: Int64, provided: Int64) -> DraftFailure {
        var response = UploadReceiver.json(UploadProblem.mismatchingOffset(expected: expected, provided: provided), status: .conflict)
        response.headers[.contentType] = "application/problem+json"
        response.headers[.uploadOffset] = String(expected)
        return DraftFailure(response: response, complete: false)
    }

    /// `PATCH`: appends at the upload's offset; with `Upload-Complete: ?1`, the last bytes.
    func append(_ request: ReceiverRequest, id: String, connection: (any ReceiverConnection)?, version: Int?,
                in uploads: some UploadStorage<DraftUploadInfo>) async throws -> ReceiverResponse {
        let (claimed, completes) = try Self.appending(request, version: version)
        return try await uploads.holding(id, claim: .endingHolder(connection: connection)) { hold in
            try await appendHeld(request, id: id, claimed: claimed, completes: completes, version: version, creating: false, in: uploads, holding: hold)
        }
    }

    /// ``append(_:id:connection:version:in:)`` once the request holds the upload `id`
    /// (`hold`), or creates it (`creating`): the body taken at `claimed`, which must be the
    /// upload's offset, then with `completes` the upload stored and the target's answer
    /// given. Every byte that reached the store counts, also from a request that was cut.
    /// A body past the upload's length removes the upload (413): its offset may not pass it.
    func appendHeld<Storage: UploadStorage<DraftUploadInfo>>(_ request: ReceiverRequest, id: String, claimed: Int64, completes: Bool, version: Int?,
                                                             creating: Bool, in uploads: Storage, holding hold: Storage.Hold) async throws -> ReceiverResponse {
        var upload = try await uploads.current(id, holding: hold, finishing: true)
        if upload.info.completing != nil, !upload.info.isStored { upload = try await uploads.finish(upload, id: id, holding: hold) }
        let location = basePath + "/" + id
        let offset = upload.offset
        guard claimed == offset else { throw Self.mismatchingOffset(expected: offset, provided: claimed) }
        if let answer = upload.info.answer {
            // The final answer of a complete upload, again: for a client that lost it.
            guard completes, (request.headers[.contentLength].flatMap(Int64.init) ?? 0) == 0 else {
                throw DraftFailure(.badRequest, "the upload is complete: nothing can be appended", complete: false)
            }
            return replay(answer, version: version)
        }
        let limit = limits(contentType: upload.info.contentType, info: upload.info).maxSize ?? Int64.max
        let length = try Self.length(of: request, offset: offset, completes: completes, known: upload.info.length)
        if let length, length > limit { throw tooLarge(contentType: upload.info.contentType, version: version) }
        if upload.info.length == nil, let length {
            upload.info.length = length
            upload = try await uploads.save(upload, id: id, holding: hold)
        }
        if upload.info.isForm {
            return try await appendForm(request, id: id, info: upload.info, at: offset, limit: upload.info.length ?? limit, completes: completes,
                                        version: version, creating: creating)
        }
        let room = (upload.info.length ?? limit) - offset
        var checksum: ChecksumHasher?
        let written = try await uploads.append(request.body, to: upload, id: id, room: room, verifying: false, checksum: &checksum, holding: hold)
        if written.overflowed {
            // Its offset may not pass its length: the upload is removed.
            try? await uploads.discard(written, of: upload, id: id, holding: hold)
            try await uploads.terminate(upload, id: id, announcing: nil, holding: hold)
            throw DraftFailure(.contentTooLarge, "the content goes past the upload's length of \(upload.info.length ?? limit) bytes: the upload is removed")
        }
        let reached = offset + written.received
        if completes, !written.cut, (upload.info.length ?? reached) == reached {
            upload.info.length = reached
            let done = try await uploads.keep(written, of: upload, id: id, completing: true, holding: hold)
            var response = replay(done.info.answer!, version: version)
            response.headers[.location] = location
            return response
        }
        upload = try await uploads.keep(written, of: upload, id: id, completing: false, holding: hold)
        if written.cut {
            logger.notice("\(request.method) \(request.loggedPath) cut at \(reached) bytes\(creating ? "; upload \(RequestLogLine.shortID(id)) kept" : "")")
        }
        return try appended(request, at: reached, cut: written.cut, completes: completes, info: upload.info, version: version, location: creating ? location : nil)
    }

    /// The answer to an append that did not complete the upload, now at `offset`: 400 when it
    /// was `cut` (its bytes kept), or when it said it `completes` it short of its length;
    /// else its offset — 201 with its `location` when it created it, 204 when not.
    func appended(_ request: ReceiverRequest, at offset: Int64, cut: Bool, completes: Bool, info: DraftUploadInfo, version: Int?,
                  location: String?) throws -> ReceiverResponse {
        if cut {
            throw DraftFailure(.badRequest, location.map { "the request was cut short; its upload goes on at \($0)" } ?? "the request was cut short",
                               complete: false)
        }
        if completes {
            throw DraftFailure(response: Self.problem(.inconsistentLength("the upload was completed at \(offset) bytes, not at its length of \(info.length ?? 0)")),
                               complete: false)
        }
        var headers: HTTPFields = [.uploadOffset: String(offset),
                                   .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)]
        if let location { headers[.location] = location }
        DraftInterop.mark(&headers, complete: false, version: version)
        return ReceiverResponse(status: location == nil ? .noContent : .created, headers: headers)
    }

    /// `DELETE`: ends a request that holds the upload, and removes it, its `post-terminate`
    /// event recorded first (a completed one's stored files stay: they are the target's).
    func cancel(_ id: String, connection: (any ReceiverConnection)?, in uploads: some UploadStorage<DraftUploadInfo>) async throws -> ReceiverResponse {
        try await uploads.holding(id, claim: .endingHolder(connection: connection)) { hold in
            let upload = try await uploads.current(id, holding: hold, finishing: false)
            try await uploads.terminate(upload, id: id, announcing: upload.info.finishedEvent(basePath: basePath), holding: hold)
        }
        return ReceiverResponse(status: .noContent)
    }

    /// A creation refused by the limits of uploads in progress: 503 with `Retry-After`.
    static func admissionRefused(_ refusal: UploadAdmission.Refusal) -> DraftFailure {
        var busy = UploadReceiver.json(ErrorBody(error: refusal.message), status: .serviceUnavailable)
        busy.headers[.retryAfter] = "60"
        return DraftFailure(response: busy, complete: nil)
    }
}
