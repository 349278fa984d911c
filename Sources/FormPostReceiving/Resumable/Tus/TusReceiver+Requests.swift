#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// tus's requests on an upload, written once against ``UploadStorage``: the same on the
/// directory and on object storage.
extension TusReceiver {
    /// `HEAD`: the upload's offset. An upload whose every byte is there and that is not
    /// stored yet (an earlier attempt could not store it) is stored first: a client that
    /// reads its full offset takes it for done. Until it is (that fails, or another request
    /// holds it), the answer is 503 with `Retry-After` — but while another request holds it
    /// in a store that completes in the background (``UploadStorage/completesInBackground``),
    /// its full offset.
    func head(_ id: String, in uploads: some UploadStorage<TusUploadInfo>) async throws -> ReceiverResponse {
        var upload = try await joiningAwaited(id, in: uploads)
        if !upload.info.isStored, upload.info.completes(at: upload.offset) {
            do {
                upload = try await uploads.finishing(id, claim: .refusedWhileHeld) { !$0.info.isStored && $0.info.completes(at: $0.offset) }
            } catch UploadStorageFailure.held where uploads.completesInBackground {
                // Stored by the request that holds it, or else by the store's retries.
            } catch let failure as UploadStorageFailure where failure == .notFound || failure == .expired || failure == .lost {
                throw failure
            } catch {
                // As the draft's receiver answers it: a completion is taken up again within moments.
                throw TusFailure(.serviceUnavailable, "the upload is complete and still being stored: ask again", retryAfter: 1)
            }
        }
        return Self.headAnswer(upload.info, offset: upload.offset, expires: HTTPDate.string(secondsSince1970: uploads.expires(upload)), basePath: basePath)
    }

    /// `GET`: the upload's state as JSON, with the receipt once stored.
    func state(_ id: String, in uploads: some UploadStorage<TusUploadInfo>) async throws -> ReceiverResponse {
        let upload = try await joiningAwaited(id, in: uploads)
        let info = upload.info
        let state = TusUploadState(length: info.length, offset: upload.offset, complete: info.file != nil,
                                   receipt: info.file.map { Receipt(fields: [], files: [$0]) })
        var response = UploadReceiver.json(state, status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The upload `id` as kept; a final upload whose partial uploads are all complete now is
    /// joined first (concatenation-unfinished).
    func joiningAwaited<Storage: UploadStorage<TusUploadInfo>>(_ id: String, in uploads: Storage) async throws -> Storage.Kept {
        let upload = try await uploads.current(id, holding: nil, finishing: true)
        guard upload.info.isAwaiting(at: upload.offset) else { return upload }
        await joinAwaited(id)
        return try await uploads.current(id, holding: nil, finishing: true)
    }

    /// `DELETE`: its `post-terminate` event recorded, then the upload removed, but a stored
    /// file. A completion that did not finish is not finished now: as the draft's, an upload
    /// whose receipt no answer gave is removed whole.
    func delete(_ id: String, in uploads: some UploadStorage<TusUploadInfo>) async throws -> ReceiverResponse {
        try await uploads.holding(id, claim: .refusedWhileHeld) { hold in
            let upload = try await uploads.current(id, holding: hold, finishing: false)
            try await uploads.terminate(upload, id: id, announcing: upload.info.event(basePath: basePath), holding: hold)
        }
        return ReceiverResponse(status: .noContent)
    }

    /// `PATCH`: the request's body appended at the upload's offset (``appendHeld(_:id:claimed:expected:in:holding:)``).
    func append(_ request: ReceiverRequest, id: String, in uploads: some UploadStorage<TusUploadInfo>) async throws -> ReceiverResponse {
        guard request.headers[.contentType]?.lowercased() == "application/offset+octet-stream" else {
            throw TusFailure(.unsupportedMediaType, "an append's Content-Type is application/offset+octet-stream")
        }
        guard let offsetText = request.headers[.uploadOffset], let claimed = Int64(offsetText) else {
            throw TusFailure(.badRequest, "Upload-Offset is missing")
        }
        let expected = try request.headers[.uploadChecksum].map(Self.expectedChecksum)
        let (response, upload) = try await uploads.holding(id, claim: .refusedWhileHeld) { hold in
            try await appendHeld(request, id: id, claimed: claimed, expected: expected, in: uploads, holding: hold)
        }
        // A partial upload a final upload awaits: with its last bytes, that one is joined now;
        // before, it is kept as active as its partial uploads (it receives no byte of its own).
        if let final = upload.info.awaitedBy, upload.info.joinedInto == nil {
            if upload.info.isWhole(at: upload.offset) { await joinAwaited(final) } else { await uploads.touch(final) }
        }
        return response
    }

    /// ``append(_:id:in:)`` once the request holds the upload `id` (`hold`): from `claimed`,
    /// its checksum `expected`. What reached the store of a request that was cut counts,
    /// unless it carries a checksum: then only a whole append whose checksum holds does. The
    /// answer, with the upload as kept after it.
    func appendHeld<Storage: UploadStorage<TusUploadInfo>>(_ request: ReceiverRequest, id: String, claimed: Int64,
                                                           expected: (algorithm: TusChecksumAlgorithm, digest: String)?, in uploads: Storage,
                                                           holding hold: Storage.Hold) async throws -> (ReceiverResponse, Storage.Kept) {
        var upload = try await uploads.current(id, holding: hold, finishing: true)
        if case .final = upload.info.concat { throw Self.finalTakesNoAppends }
        let offset = upload.offset
        guard claimed == offset else { throw TusFailure(.conflict, "the upload's offset is \(offset), not \(claimed)") }
        if let length = try Self.lengthDeclared(by: request.headers, for: upload.info, at: offset, maxSize: maxSize) {
            upload.info.length = length
            upload = try await uploads.save(upload, id: id, holding: hold)
        }
        let room = upload.info.room(from: offset, limit: maxSize)
        if let declared = request.headers[.contentLength].flatMap(Int64.init) {
            guard declared >= 0 else { throw TusFailure(.badRequest, "Content-Length is negative") }
            if declared > room { throw Self.overflow(upload.info, declared: declared, at: offset, maxSize: maxSize) }
        }
        guard !upload.info.isWhole(at: offset) else {
            // Every byte is there: stored now if an earlier attempt could not.
            if !upload.info.isStored, upload.info.completes(at: offset) { upload = try await uploads.finish(upload, id: id, holding: hold) }
            return (appended(offset, upload, in: uploads), upload)
        }
        var checksum = expected.map { ChecksumHasher($0.algorithm) }
        let written = try await uploads.append(request.body, to: upload, id: id, room: room, verifying: expected != nil, checksum: &checksum, holding: hold)
        if written.cut { logger.notice("PATCH \(request.loggedPath) cut at \(offset + written.received) bytes") }
        if let expected, written.cut || written.overflowed || checksum?.finalizeBase64() != expected.digest {
            // Nothing of an append whose checksum does not hold counts, nor of one cut short.
            try await uploads.discard(written, of: upload, id: id, holding: hold)
            if written.overflowed { throw Self.overflow(upload.info, maxSize: maxSize) }
            throw TusFailure(.checksumMismatch, written.cut ? "the append was cut short: nothing of it was kept" : "the content does not match Upload-Checksum")
        }
        let reached = offset + written.received
        upload = try await uploads.keep(written, of: upload, id: id, completing: upload.info.completes(at: reached), holding: hold)
        // What went past Upload-Length was not taken; the upload is whole all the same.
        if written.overflowed { throw Self.overflow(upload.info, maxSize: maxSize) }
        return (appended(reached, upload, in: uploads), upload)
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

    /// The answer to an append that left `upload` at `offset`.
    func appended<Storage: UploadStorage<TusUploadInfo>>(_ offset: Int64, _ upload: Storage.Kept, in uploads: Storage) -> ReceiverResponse {
        ReceiverResponse(status: .noContent, headers: [.uploadOffset: String(offset),
                                                       .uploadExpires: HTTPDate.string(secondsSince1970: uploads.expires(upload))])
    }
}
