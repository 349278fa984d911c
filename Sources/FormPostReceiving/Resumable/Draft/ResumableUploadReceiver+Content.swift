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
    // MARK: - Forms

    /// Appends `request`'s body to the form `id` (`info`) at `offset`, parsed as it arrives
    /// (``ResumableForms``), not past `limit`; with `completes`, the form answered. The
    /// request holds the upload, in the directory (a form is kept nowhere else).
    ///
    /// - Throws: ``DraftFailure`` with the form's answer, for good, when it is malformed or
    ///   past a limit; 413 when the body goes past the length (the upload is then removed);
    ///   the failure of a write (the upload then ends where its bytes on disk do).
    func appendForm(_ request: ReceiverRequest, id: String, info: DraftUploadInfo, at offset: Int64, limit: Int64, completes: Bool, version: Int?,
                    creating: Bool) async throws -> ReceiverResponse {
        let outcome = try await forms.append(request.body, to: id, info: info, at: offset, limit: limit)
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
        if outcome.cut {
            logger.notice("\(request.method) \(request.loggedPath) cut at \(outcome.offset) bytes\(creating ? "; upload \(RequestLogLine.shortID(id)) kept" : "")")
        } else if completes {
            var whole = info
            whole.length = info.length ?? outcome.offset
            return try await finishForm(id, info: whole, offset: outcome.offset, received: outcome.received, version: version, location: basePath + "/" + id)
        }
        return try appended(request, at: outcome.offset, cut: outcome.cut, completes: completes, info: info, version: version,
                            location: creating ? basePath + "/" + id : nil)
    }

    /// Answers the form `id`, complete at `offset` bytes (`received` of them arrived: more
    /// than its offset when its parse holds its last bytes back): its files are moved into
    /// the directory, and the answer kept, to be given again. A form whose every byte arrived
    /// but whose parse still holds some back ends before its closing delimiter: it is
    /// answered 400, for good.
    func finishForm(_ id: String, info: DraftUploadInfo, offset: Int64, received: Int64, version: Int?, location: String) async throws -> ReceiverResponse {
        guard offset == info.length else {
            if received == info.length, let refused = try await forms.refuseUnfinished(id, info: info, at: offset)?.answer {
                logger.notice("upload \(RequestLogLine.shortID(id)): the form ends before its closing delimiter")
                var response = replay(refused, version: version)
                response.headers[.location] = location
                throw DraftFailure(response: response, complete: nil)
            }
            throw DraftFailure(response: Self.problem(.inconsistentLength("the upload was completed at \(offset) bytes, not at its length of \(info.length ?? 0)")), complete: false)
        }
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
    static func completeFull(_ retries: CompletionRetries, in store: UploadStore, locks: UploadLocks, lifetime: UploadExpiry, logger: Logger, basePath: String) {
        for id in retries.all {
            guard let token = locks.acquire(id, background: true) else { continue }
            defer { locks.release(id, token: token) }
            do {
                if try completeAgain(id, in: store, lifetime: lifetime, basePath: basePath) {
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
    static func completeAgain(_ id: String, in store: UploadStore, lifetime: UploadExpiry, basePath: String) throws -> Bool {
        guard let info = store.load(id, as: DraftUploadInfo.self), !lifetime.hasExpired(id, created: info.created, in: store) else { return false }
        if info.answer != nil {
            guard info.storingParts != nil else { return false }
            _ = try ResumableForms.settle(id, info: info, in: store)
            return true
        }
        // A representation whose every byte is there: its completion failed, recorded or not
        // (before its name was: the stored file's name and SHA-256 are planned now).
        guard !info.isForm, let length = info.length, store.dataSize(id) == length else { return false }
        _ = try DirectoryUploads.complete(id, info: info, sha256: nil, in: store, basePath: basePath)
        return true
    }

    /// A kept answer, as a response with `Upload-Complete: ?1`.
    func replay(_ answer: StoredAnswer, version: Int?) -> ReceiverResponse {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        DraftInterop.mark(&headers, complete: true, version: version)
        return ReceiverResponse(status: HTTPResponse.Status(code: answer.status), headers: headers, body: ByteBuffer(string: answer.json))
    }
}
