#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import ResumableHTTP

/// tus's concatenation, in any store (``UploadJoining``): partial uploads
/// (`Upload-Concat: partial`) are sent like any upload — at once, each resuming on its own —
/// and are not stored when complete; a final upload (`Upload-Concat: final;URL URL…`) joins
/// them, of the same client (address and granted metadata), in its order, into the stored
/// file, whose SHA-256 in the receipt is that of the whole file: at once when each is
/// complete, else (concatenation-unfinished) once the last of them is, or when the final
/// upload is asked for after. Once joined, the partial uploads' bytes go and their states
/// name the final upload: asked for again (its answer lost), the same final is answered
/// with the same upload — but a join its receiver left unfinished, which is joined anew.
extension TusReceiver {
    /// `POST` of a final upload joining `partials`, with `metadata` (its file's name and
    /// type), for `client`, with what its authorization `granted`, in `uploads`: stored
    /// before it is answered when each partial upload is complete, else answered at once,
    /// without an offset, each partial upload naming it. Each partial upload is held meanwhile.
    ///
    /// - Throws: ``TusFailure`` 400 for a partial upload that does not exist, is not partial,
    ///   another client's, or joined into another upload; 413 past the largest upload; 503
    ///   when ``UploadAdmission`` refuses; ``UploadStorageFailure/held`` (423) while a
    ///   request holds one.
    func createFinal<Storage: UploadJoining>(joining partials: [String], metadata: String?, client: String?, granted: [String: String]?,
                                             in uploads: Storage) async throws -> ReceiverResponse {
        try await uploads.holdingAll(partials, claim: .refusedWhileHeld) { holds in
            var joining: [JoiningPartial<Storage.Kept, Storage.Hold>] = []
            var complete = true
            for (id, hold) in zip(partials, holds) {
                let upload: Storage.Kept
                do {
                    upload = try await uploads.current(id, holding: hold, finishing: true)
                } catch UploadStorageFailure.notFound, UploadStorageFailure.expired {
                    throw TusFailure(.badRequest, "the partial upload \(id) does not exist")
                }
                complete = try Self.checkJoinable(upload.info, id: id, at: upload.offset, client: client, granted: granted) && complete
                joining.append(JoiningPartial(id: id, upload: upload, hold: hold))
            }
            let named = Set(joining.map(\.upload.info.finalNamed))
            guard let abandoned = try await unfinishedJoins(named, of: joining, in: uploads) else {
                return try await joinedBefore(named, partials: partials, in: uploads)
            }
            let info = try finalInfo(joining: partials, infos: joining.map(\.upload.info), metadata: metadata, client: client, granted: granted)
            let response = try await admitted {
                try await uploads.creating(info, client: client, claim: .refusedWhileHeld) { id, hold in
                    ReceiverMetrics.upload(.tus, .created)
                    var response = ReceiverResponse(status: .created, headers: [.location: basePath + "/" + id,
                                                                                .uploadExpires: HTTPDate.string(secondsSince1970: uploads.expires(new: info))])
                    if complete {
                        let final = try await uploads.current(id, holding: hold, finishing: false)
                        try await uploads.join(joining, into: final, id: id, holding: hold, answered: false)
                        response.headers[.uploadOffset] = String(info.length ?? 0)
                    } else {
                        for partial in joining {
                            var awaited = partial.upload
                            awaited.info.awaitedBy = id
                            _ = try await uploads.save(awaited, id: partial.id, holding: partial.hold)
                        }
                    }
                    return response
                }
            }
            for final in abandoned { await removeUnfinishedJoin(final, in: uploads) }
            return response
        }
    }

    /// Joins `final` if it awaits partial uploads (concatenation-unfinished) that are all
    /// complete now; nothing when one is not, or a request holds one or the final upload (a
    /// later request on it tries again). A failure is logged, and tried again alike.
    func joinAwaited(_ final: String) async {
        await joinAwaited(final, in: storage)
    }

    /// ``joinAwaited(_:)`` in `uploads`.
    private func joinAwaited<Storage: UploadJoining>(_ final: String, in uploads: Storage) async {
        do {
            try await uploads.holding(final, claim: .refusedAtOnce) { hold in
                var upload = try await uploads.current(final, holding: hold, finishing: true)
                guard upload.info.isAwaiting(at: upload.offset), case .final(let partials) = upload.info.concat else { return }
                try await uploads.holdingAll(partials, claim: .refusedAtOnce) { holds in
                    var joining: [JoiningPartial<Storage.Kept, Storage.Hold>] = []
                    for (id, hold) in zip(partials, holds) {
                        let partial = try await uploads.current(id, holding: hold, finishing: true)
                        guard partial.info.finalNamed == final || partial.info.finalNamed == nil,
                              try Self.checkJoinable(partial.info, id: id, at: partial.offset, client: upload.info.client, granted: upload.info.granted)
                        else { return }
                        joining.append(JoiningPartial(id: id, upload: partial, hold: hold))
                    }
                    if upload.info.length == nil {
                        upload.info.length = try finalInfo(joining: partials, infos: joining.map(\.upload.info), metadata: nil, client: nil,
                                                           granted: nil).length
                        upload = try await uploads.save(upload, id: final, holding: hold)
                    }
                    try await uploads.join(joining, into: upload, id: final, holding: hold, answered: true)
                }
            }
        } catch UploadStorageFailure.held {
            return
        } catch {
            logger.error("upload \(RequestLogLine.shortID(final)): joining its partial uploads failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
        }
    }

    /// The final uploads that `partials` were joined into (`named`), when none of them is
    /// whole and none awaits them: their receivers stopped mid-join, and the partial
    /// uploads' bytes are all there, to be joined anew (``UploadJoining/isUnfinishedJoin(_:)``).
    /// Empty when they name none; nil when one is whole, awaits them, or is gone (their
    /// bytes may be too).
    private func unfinishedJoins<Storage: UploadJoining>(_ named: Set<String?>, of partials: [JoiningPartial<Storage.Kept, Storage.Hold>],
                                                         in uploads: Storage) async throws -> [String]? {
        guard partials.allSatisfy({ $0.upload.info.awaitedBy == nil }) else { return nil }
        var unfinished: [String] = []
        for case let final? in named {
            let upload: Storage.Kept
            do {
                upload = try await uploads.current(final, holding: nil, finishing: false)
            } catch let failure as UploadStorageFailure where failure == .notFound || failure == .expired {
                return nil
            }
            guard uploads.isUnfinishedJoin(upload) else { return nil }
            unfinished.append(final)
        }
        return unfinished
    }

    /// Removes `final`, a join that never finished, held — unless it is whole by now; best
    /// effort (else it expires).
    private func removeUnfinishedJoin(_ final: String, in uploads: some UploadJoining) async {
        try? await uploads.holding(final, claim: .refusedWhileHeld) { hold in
            let upload = try await uploads.current(final, holding: hold, finishing: false)
            guard uploads.isUnfinishedJoin(upload) else { return }
            try await uploads.terminate(upload, id: final, announcing: nil, holding: hold)
        }
    }

    /// An append to a final upload, refused.
    static var finalTakesNoAppends: TusFailure {
        TusFailure(.forbidden, "a final upload takes no appends: its bytes are its partial uploads'")
    }

    /// Whether the upload `id`, `info` at `offset`, a partial upload of `client` (with what
    /// its authorization `granted`), is complete: a final upload joins it now, or awaits it.
    ///
    /// - Throws: ``TusFailure`` 400 when it is not partial, or another client's.
    static func checkJoinable(_ info: TusUploadInfo, id: String, at offset: Int64, client: String?, granted: [String: String]?) throws -> Bool {
        guard info.concat == .partial else { throw TusFailure(.badRequest, "the upload \(id) is not a partial upload (Upload-Concat: partial)") }
        guard info.client == client, info.granted == granted else {
            throw TusFailure(.badRequest, "the partial upload \(id) is another client's")
        }
        return info.verified == nil && info.isWhole(at: offset)
    }

    /// The final upload joining `partials` (`infos`), with `metadata`, for `client`, with what
    /// its authorization `granted`: its length theirs, unknown while one of theirs is.
    ///
    /// - Throws: ``TusFailure`` 413 past the largest upload.
    func finalInfo(joining partials: [String], infos: [TusUploadInfo], metadata: String?, client: String?,
                   granted: [String: String]?) throws -> TusUploadInfo {
        let lengths = infos.compactMap(\.length)
        let length = lengths.count == infos.count ? lengths.reduce(0, +) : nil
        if let length, length > maxSize { throw TusFailure(.contentTooLarge, "the joined upload exceeds the limit of \(maxSize) bytes") }
        return TusUploadInfo(length: length, metadata: metadata, created: Date().timeIntervalSince1970, client: client, granted: granted,
                             concat: .final(partials: partials))
    }

    /// The answer to a final upload whose partial uploads name one already (`named`: the
    /// uploads they were joined into, or are awaited by): that upload again when they all
    /// name it and it is still in `uploads` — its offset told once it is whole (on a store
    /// that does not complete in the background, once it is stored: a recorded completion
    /// is finished by a `HEAD` of it).
    ///
    /// - Throws: ``TusFailure`` 400 when they do not.
    func joinedBefore(_ named: Set<String?>, partials: [String], in uploads: some UploadJoining) async throws -> ReceiverResponse {
        // Partial uploads not named yet (a receiver stopped while it named them) are the
        // final's all the same: it names them in its order.
        let finals = Set(named.compactMap { $0 })
        guard finals.count == 1, let final = finals.first else {
            throw TusFailure(.badRequest, "the partial uploads named are joined into other uploads")
        }
        let (info, offset, expires): (TusUploadInfo, Int64, Double)
        do {
            let upload = try await uploads.current(final, holding: nil, finishing: true)
            (info, offset, expires) = (upload.info, upload.info.isStored || uploads.completesInBackground ? upload.offset : 0, uploads.expires(upload))
        } catch let failure as UploadStorageFailure where failure == .notFound || failure == .expired {
            throw TusFailure(.badRequest, "the partial uploads named were joined into an upload that is gone")
        }
        guard info.concat == .final(partials: partials) else {
            throw TusFailure(.badRequest, "the partial uploads named were joined in another order")
        }
        var response = ReceiverResponse(status: .created, headers: [.location: basePath + "/" + final, .uploadExpires: HTTPDate.string(secondsSince1970: expires)])
        if info.isWhole(at: offset) { response.headers[.uploadOffset] = String(offset) }
        return response
    }
}
