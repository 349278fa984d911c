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

extension ResumableUploadReceiver {
    // MARK: - Requests

    /// A request to a target that asks for a resumable upload: the upload resource is
    /// created for `client` (its address) if `UploadAdmission` takes it (and announced at
    /// once in a 104), then the request's content appended.
    func create(_ request: ReceiverRequest, connection: (any ReceiverConnection)?, client: String?, granted: [String: String]?, version: Int?) async throws -> ReceiverResponse {
        guard request.method == .post || request.method == .put else {
            throw DraftFailure(.methodNotAllowed, "a resumable upload is created with POST or PUT")
        }
        guard let completes = DraftInterop.completes(request.headers, version: version) else {
            throw DraftFailure(.badRequest, "Upload-Complete is not a Boolean (?0 or ?1)")
        }
        let contentType = request.headers[.contentType] ?? MIMEType.octetStream
        let contentLength = request.headers[.contentLength].flatMap(Int64.init)
        var length = try Self.length(of: request, offset: 0, completes: completes, known: nil)
        let limit = limits(contentType: contentType, info: nil).maxSize ?? Int64.max
        if let length, length > limit { throw tooLarge(contentType: contentType, version: version) }
        if let contentLength, contentLength > limit { throw tooLarge(contentType: contentType, version: version) }
        var info = DraftUploadInfo(created: Date().timeIntervalSince1970, length: length, method: request.method.rawValue, path: request.path,
                                   contentType: contentType, contentDisposition: request.headers[.contentDisposition])
        info.client = client
        info.granted = granted
        if let objects { return try await createObject(request, info: info, completes: completes, connection: connection, version: version, in: objects) }
        let (store, receiver, created) = (self.store, self, info)
        let (id, token) = try await threadPool.runIfActive {
            do {
                return try receiver.admission.admit(created, created: created.created, client: client, connection: connection, store: store,
                                                    expiry: receiver.lifetime, locks: receiver.locks, digests: receiver.digests, logger: receiver.logger)
            } catch let refusal as UploadAdmission.Refusal {
                throw Self.admissionRefused(refusal)
            }
        }
        let location = basePath + "/" + id
        defer { locks.release(id, token: token) }
        ReceiverMetrics.upload(.ietf, .created)
        await announceResumption(at: location, info: info, connection: connection, version: version)
        let (outcome, received) = try await write(request.body, to: id, info: info, at: 0, version: version)
        if outcome.cut {
            logger.notice("\(request.method) \(request.loggedPath) cut at \(outcome.offset) bytes; upload \(RequestLogLine.shortID(id)) kept")
            throw DraftFailure(.badRequest, "the request was cut short; its upload goes on at \(location)", complete: false)
        }
        if completes {
            length = length ?? outcome.offset
            info.length = length
            return try await finish(id, info: info, offset: outcome.offset, received: received, version: version, location: location)
        }
        var headers: HTTPFields = [.location: location, .uploadOffset: String(outcome.offset),
                                   .uploadLimit: limits(contentType: contentType, info: info).fieldValue(interopVersion: version)]
        DraftInterop.mark(&headers, complete: false, version: version)
        return ReceiverResponse(status: .created, headers: headers)
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
    /// complete the target's answer again).
    func state(_ id: String, connection: (any ReceiverConnection)?, version: Int?, head: Bool) async throws -> ReceiverResponse {
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        let (info, offset) = try await current(id)
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
    func append(_ request: ReceiverRequest, id: String, connection: (any ReceiverConnection)?, version: Int?) async throws -> ReceiverResponse {
        let (claimed, completes) = try Self.appending(request, version: version)
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        var (info, offset) = try await current(id)
        guard claimed == offset else { throw Self.mismatchingOffset(expected: offset, provided: claimed) }
        if let answer = info.answer {
            // The final answer of a complete upload, again: for a client that lost it.
            guard completes, (request.headers[.contentLength].flatMap(Int64.init) ?? 0) == 0 else {
                throw DraftFailure(.badRequest, "the upload is complete: nothing can be appended", complete: false)
            }
            return replay(answer, version: version)
        }
        let length = try Self.length(of: request, offset: offset, completes: completes, known: info.length)
        if let length, length > (limits(contentType: info.contentType, info: info).maxSize ?? Int64.max) {
            throw tooLarge(contentType: info.contentType, version: version)
        }
        if info.length == nil, let length {
            info.length = length
            let (store, saved) = (self.store, info)
            try await threadPool.runIfActive { try store.save(saved, id: id) }
        }
        let (outcome, received) = try await write(request.body, to: id, info: info, at: offset, version: version)
        if outcome.cut {
            logger.notice("PATCH \(request.loggedPath) cut at \(outcome.offset) bytes")
            throw DraftFailure(.badRequest, "the request was cut short", complete: false)
        }
        let location = basePath + "/" + id
        if completes {
            info.length = info.length ?? outcome.offset
            return try await finish(id, info: info, offset: outcome.offset, received: received, version: version, location: location)
        }
        var headers: HTTPFields = [.uploadOffset: String(outcome.offset),
                                   .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)]
        DraftInterop.mark(&headers, complete: false, version: version)
        return ReceiverResponse(status: .noContent, headers: headers)
    }

    /// `DELETE`: ends a request that holds the upload, and removes it (a completed one's
    /// stored files stay: they are the target's).
    func cancel(_ id: String, connection: (any ReceiverConnection)?) async throws -> ReceiverResponse {
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        let (info, _) = try await current(id)
        let store = self.store
        let receipt = info.answer.flatMap { $0.status == 200 ? try? JSONDecoder().decode(Receipt.self, from: Data($0.json.utf8)) : nil }
        let ended = info.event(receipt: receipt ?? Receipt())
        try await threadPool.runIfActive {
            // Recorded first: an end the application will not hear of is never answered.
            try store.announce(ended, as: nil, type: UploadEvent.postTerminate)
            store.remove(id)
        }
        digests.remove(id)
        forms.progresses.remove(id)
        return ReceiverResponse(status: .noContent)
    }

    /// A creation refused by the limits of uploads in progress: 503 with `Retry-After`.
    static func admissionRefused(_ refusal: UploadAdmission.Refusal) -> DraftFailure {
        var busy = UploadReceiver.json(ErrorBody(error: refusal.message), status: .serviceUnavailable)
        busy.headers[.retryAfter] = "60"
        return DraftFailure(response: busy, complete: nil)
    }
}
