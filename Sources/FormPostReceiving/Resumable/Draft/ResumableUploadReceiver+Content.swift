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
    // MARK: - Content

    /// Appends `body` to upload `id` at `offset`, not past its length (or the limit); the
    /// running SHA-256 of a representation that is not a form is kept. Returns how the
    /// append ended and how many of the upload's bytes have arrived: its offset, or for a
    /// form more, by the bytes its parse holds back.
    ///
    /// - Throws: ``DraftFailure`` 413 when the body goes past the length: the upload is then
    ///   removed (its offset may not exceed its length). The failure of a write (507 for a
    ///   full disk): the upload then ends where the bytes written in order do.
    func write(_ body: ReceiverRequestBody, to id: String, info: DraftUploadInfo, at offset: Int64,
                       version: Int?) async throws -> (outcome: BodyAppender.Outcome, received: Int64) {
        let store = self.store
        let limit = info.length ?? limits(contentType: info.contentType, info: info).maxSize ?? Int64.max
        if info.isForm { return try await writeForm(body, to: id, info: info, at: offset, limit: limit, version: version) }
        let descriptor = try await threadPool.runIfActive { try store.openForAppend(id) }
        var digest = digests.take(id, at: offset)
        var checksum: ChecksumHasher?
        let outcome = await BodyAppender(threadPool: threadPool).append(body, to: descriptor, at: offset, limit: limit, digest: &digest, checksum: &checksum)
        if let failure = outcome.failure {
            // Nothing after the failed write counts: the data ends where the bytes written in order do.
            try? await threadPool.runIfActive { try store.cutBack(id, to: outcome.offset) }
            if let digest { digests.put(id, digest, offset: outcome.offset) }
            throw failure
        }
        if outcome.overflowed {
            try await threadPool.runIfActive { store.remove(id) }
            digests.remove(id)
            throw DraftFailure(.contentTooLarge, "the content goes past the upload's length of \(limit) bytes: the upload is removed")
        }
        if let digest { digests.put(id, digest, offset: outcome.offset) }
        return (outcome, outcome.offset)
    }

    /// Appends `body` to the form `id` at `offset`, parsed as it arrives (``ResumableForms``).
    ///
    /// - Throws: ``DraftFailure`` with the form's answer, for good, when it is malformed or
    ///   past a limit; 413 when the body goes past the length (the upload is then removed);
    ///   the failure of a write (the upload then ends where its bytes on disk do).
    func writeForm(_ body: ReceiverRequestBody, to id: String, info: DraftUploadInfo, at offset: Int64, limit: Int64,
                           version: Int?) async throws -> (outcome: BodyAppender.Outcome, received: Int64) {
        let outcome = try await forms.append(body, to: id, info: info, at: offset, limit: limit)
        if let failure = outcome.failure { throw failure }
        if let fault = outcome.formFault {
            let answered = try await forms.fault(fault, id: id, info: info)
            logger.notice("upload \(RequestLogLine.shortID(id)): the form is refused: \(fault)")
            throw DraftFailure(response: replay(answered.answer!, version: version), complete: nil)
        }
        if outcome.overflowed {
            let store = self.store
            try await threadPool.runIfActive { store.remove(id) }
            forms.progresses.remove(id)
            throw DraftFailure(.contentTooLarge, "the content goes past the upload's length of \(limit) bytes: the upload is removed")
        }
        return (BodyAppender.Outcome(offset: outcome.offset, cut: outcome.cut, overflowed: false), outcome.received)
    }

    /// Answers the whole representation of upload `id`, now complete at `offset` bytes
    /// (`received` of them arrived: for a form, more than its offset when its parse holds
    /// its last bytes back): a form's files are moved into the directory, anything else
    /// stored as one file. The answer is kept, to be given again. A form whose every byte
    /// arrived but whose parse still holds some back ends before its closing delimiter:
    /// it is answered 400, for good.
    func finish(_ id: String, info: DraftUploadInfo, offset: Int64, received: Int64, version: Int?,
                        location: String) async throws -> ReceiverResponse {
        guard offset == info.length else {
            if info.isForm, received == info.length, let refused = try await forms.refuseUnfinished(id, info: info, at: offset)?.answer {
                logger.notice("upload \(RequestLogLine.shortID(id)): the form ends before its closing delimiter")
                var response = replay(refused, version: version)
                response.headers[.location] = location
                throw DraftFailure(response: response, complete: nil)
            }
            throw DraftFailure(response: Self.problem(.inconsistentLength("the upload was completed at \(offset) bytes, not at its length of \(info.length ?? 0)")), complete: false)
        }
        guard info.isForm else { return try await storeFile(id, info: info, offset: offset, version: version, location: location) }
        let answer: StoredAnswer
        do {
            answer = try await forms.complete(id, info: info).answer!
        } catch {
            retries.add(id)
            throw error
        }
        retries.remove(id)
        digests.remove(id)
        logger.info("upload \(RequestLogLine.shortID(id)) complete: \(offset) bytes, answered \(answer.status)")
        ReceiverMetrics.upload(.ietf, .completed)
        var response = replay(answer, version: version)
        response.headers[.location] = location
        return response
    }

    /// Stores the representation of upload `id`, complete at `offset` bytes, as one file —
    /// under the name and SHA-256 an earlier attempt recorded, or new ones — saves its
    /// receipt as the upload's answer and removes its data, in steps a crash cannot tear
    /// (``UploadStore/complete(_:as:pending:done:)``); answers that receipt. When that fails,
    /// the completion is tried again (``CompletionRetries``) until it succeeds.
    func storeFile(_ id: String, info: DraftUploadInfo, offset: Int64, version: Int?, location: String) async throws -> ReceiverResponse {
        let sha256 = digests.take(id, at: offset).map { Hexadecimal.string($0.finalize()) }
        let store = self.store
        let answer: StoredAnswer
        do {
            answer = try await threadPool.runIfActive { try Self.storeFile(id, info: info, offset: offset, sha256: sha256, in: store) }
        } catch {
            retries.add(id)
            throw error
        }
        retries.remove(id)
        logger.info("upload \(RequestLogLine.shortID(id)) complete: \(offset) bytes, answered \(answer.status)")
        ReceiverMetrics.upload(.ietf, .completed)
        var response = replay(answer, version: version)
        response.headers[.location] = location
        return response
    }

    /// Stores the representation of upload `id`, complete at `offset` bytes, as
    /// ``storeFile(_:info:offset:version:location:)`` says (its SHA-256 `sha256`, or read from
    /// its data when nil); returns its answer. It blocks on the file system.
    static func storeFile(_ id: String, info: DraftUploadInfo, offset: Int64, sha256: String?, in store: UploadStore) throws -> StoredAnswer {
        let completion = try info.completing ?? store.plannedCompletion(id, sha256: sha256)
        let receipt = info.receipt(id: id, size: offset, as: completion)
        let answer = StoredAnswer(status: 200, json: String(decoding: UploadReceiver.encodeJSON(receipt), as: UTF8.self))
        var pending = info, done = info
        pending.completing = completion
        done.completing = nil
        done.answer = answer
        try store.complete(id, as: completion, pending: pending, done: done, announcing: info.event(receipt: receipt))
        return answer
    }

    // MARK: - Completions taken up again

    /// Notes for a completion (``CompletionRetries``) the uploads whose completion began
    /// and did not end: a form answered whose files are not all moved, a representation
    /// whose completion is recorded. It reads the state of each upload in progress: at start.
    func findUnfinishedCompletions() {
        for (id, entry) in store.census.all where !entry.complete && !entry.creating {
            guard let info = store.load(id, as: DraftUploadInfo.self) else { continue }
            if info.storingParts != nil || (info.answer == nil && info.completing != nil) { retries.add(id) }
        }
    }

    /// Tries again the completions of `retries` that no request holds now (one that does
    /// completes it itself). It blocks on the file system: at start, and in each sweep.
    static func completeFull(_ retries: CompletionRetries, in store: UploadStore, locks: UploadLocks, lifetime: UploadExpiry, logger: Logger) {
        for id in retries.all {
            guard let token = locks.acquire(id, background: true) else { continue }
            defer { locks.release(id, token: token) }
            do {
                if try completeAgain(id, in: store, lifetime: lifetime) {
                    logger.info("upload \(RequestLogLine.shortID(id)) complete, its completion taken up again")
                    ReceiverMetrics.upload(.ietf, .completed)
                }
                retries.remove(id)
            } catch {
                logger.error("upload \(RequestLogLine.shortID(id)): completing it again failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
            }
        }
    }

    /// Finishes the completion of upload `id` if one began and did not end (and it has not
    /// expired): a form's files moved, a representation stored; whether there was one to
    /// finish. It blocks on the file system; call it under the upload's lock.
    static func completeAgain(_ id: String, in store: UploadStore, lifetime: UploadExpiry) throws -> Bool {
        guard let info = store.load(id, as: DraftUploadInfo.self), !lifetime.hasExpired(id, created: info.created, in: store) else { return false }
        if info.answer != nil {
            guard info.storingParts != nil else { return false }
            _ = try ResumableForms.settle(id, info: info, in: store)
            return true
        }
        // A representation whose every byte is there: its completion failed, recorded or not
        // (before its name was: the stored file's name and SHA-256 are planned now).
        guard !info.isForm, let length = info.length, store.dataSize(id) == length else { return false }
        _ = try storeFile(id, info: info, offset: length, sha256: nil, in: store)
        return true
    }

    /// A kept answer, as a response with `Upload-Complete: ?1`.
    func replay(_ answer: StoredAnswer, version: Int?) -> ReceiverResponse {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        DraftInterop.mark(&headers, complete: true, version: version)
        return ReceiverResponse(status: HTTPResponse.Status(code: answer.status), headers: headers, body: ByteBuffer(string: answer.json))
    }
}
