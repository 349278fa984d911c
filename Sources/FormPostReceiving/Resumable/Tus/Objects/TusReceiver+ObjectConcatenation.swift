#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import ResumableHTTP

/// tus's concatenation on object storage: partial uploads are kept as any upload (their
/// objects under `PREFIX.tus/`, never among stored files), and a final upload joins them
/// with copies the store makes (``ObjectUploadStore/join(_:into:uploadID:partSize:)``) — at
/// once when each is complete, else once the last of them is (concatenation-unfinished).
/// Its SHA-256 is read back from the joined object, the bytes having passed through no
/// receiver.
extension TusReceiver {
    /// Where tus uploads are kept in object storage: under `PREFIX.tus/`.
    typealias TusObjects = ObjectUploadStore<TusUploadInfo>

    /// A partial upload as a join reads it: its state, and that state's ETag.
    typealias SavedPartial = (state: TusObjects.State, etag: String)

    /// `POST` of a final upload joining `partials` on object storage, with `metadata`, for
    /// `client`, with what its authorization `granted`: stored before it is answered when
    /// each partial upload is complete, else answered at once without an offset, each
    /// partial upload naming it. Each partial upload's lease is held meanwhile. Asked for
    /// again, the final upload they name is answered again — but one whose join its receiver
    /// left unfinished (its completion never recorded), which is joined anew.
    ///
    /// - Throws: ``TusFailure`` 400 as on the disk; ``UploadStorageFailure/held`` (423) while
    ///   another request holds one of them.
    func createFinalObject(joining partials: [String], metadata: String?, client: String?, granted: [String: String]?,
                           in objects: TusObjects) async throws -> ReceiverResponse {
        try await objects.holdingLeases(partials) { leases in
            var saved: [SavedPartial] = []
            var complete = true
            for id in partials {
                guard let (state, etag) = try await objects.load(id), !objects.isExpired(state, expiry: expiry) else {
                    throw TusFailure(.badRequest, "the partial upload \(id) does not exist")
                }
                complete = try Self.checkJoinable(state.info, id: id, at: state.offset, client: client, granted: granted) && complete
                saved.append((state, etag))
            }
            let named = Set(saved.map(\.state.info.finalNamed))
            guard let abandoned = try await unfinishedJoins(named, of: saved, in: objects) else {
                return try await joinedBefore(named, partials: partials) { final in
                    // Its offset told once stored: a completion recorded and not finished is
                    // finished by a HEAD of it.
                    let state = try await objects.current(final, expiry: expiry)
                    return (state.info, state.info.file == nil ? 0 : state.offset)
                }
            }
            let info = try finalInfo(joining: partials, infos: saved.map(\.state.info), metadata: metadata, client: client, granted: granted)
            // A final upload that waits begins its multipart upload when it is joined: the
            // bucket's lifecycle rule would abort one begun long before.
            let id = try await admitted {
                try await objects.startAdmitted(info, client: client, expiry: expiry, beginningMultipart: complete)
            }
            ReceiverMetrics.upload(.tus, .created)
            var response = ReceiverResponse(status: .created, headers: [.location: basePath + "/" + id,
                                                                        .uploadExpires: HTTPDate.string(secondsSince1970: objects.expires(objects.newState(info), expiry: expiry))])
            if complete {
                try await objects.holdingLease(id) { lease in
                    try await joinHeldObject(id, partials: partials, saved: saved, leases: leases + [lease], in: objects)
                }
                for final in abandoned { await removeUnfinishedJoin(final, in: objects) }
                response.headers[.uploadOffset] = String(info.length ?? 0)
            } else {
                for (index, (state, etag)) in saved.enumerated() {
                    var awaited = state
                    awaited.info.awaitedBy = id
                    try leases[index].check()
                    _ = try await objects.save(awaited, id: partials[index], replacing: etag)
                }
            }
            return response
        }
    }

    /// Joins `final` on object storage if it awaits partial uploads (concatenation-unfinished)
    /// that are all complete now; nothing when one is not, or a request holds one or the
    /// final upload (a later request on it tries again). A failure is logged, and tried
    /// again alike.
    func joinAwaitedObject(_ final: String, in objects: TusObjects) async {
        do {
            try await objects.holdingLease(final) { lease in
                guard let (state, _) = try await objects.load(final), state.info.isAwaiting(at: state.offset),
                      case .final(let partials) = state.info.concat else { return }
                try await objects.holdingLeases(partials) { leases in
                    var saved: [SavedPartial] = []
                    for id in partials {
                        guard let (partial, etag) = try await objects.load(id), partial.info.finalNamed == final || partial.info.finalNamed == nil,
                              try Self.checkJoinable(partial.info, id: id, at: partial.offset, client: state.info.client, granted: state.info.granted)
                        else { return }
                        saved.append((partial, etag))
                    }
                    try await joinHeldObject(final, partials: partials, saved: saved, leases: leases + [lease], in: objects)
                }
            }
        } catch UploadStorageFailure.held {
            return
        } catch {
            logger.error("upload \(RequestLogLine.shortID(final)): joining its partial uploads failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
        }
    }

    /// Joins `partials` (`saved`, each complete) into the final upload `id`, holding
    /// `leases` (theirs, and the final's last): its length set and its multipart upload begun
    /// if they were not; each partial upload saved naming it, then made one object; those
    /// objects joined by the store into its multipart upload; its completion recorded and
    /// finished; the partial uploads' objects removed.
    private func joinHeldObject(_ id: String, partials: [String], saved: [SavedPartial], leases: [HeldLease], in objects: TusObjects) async throws {
        guard var (final, etag) = try await objects.load(id) else { throw UploadStorageFailure.notFound }
        var changed = false
        if final.info.length == nil {
            final.info.length = try finalInfo(joining: partials, infos: saved.map(\.state.info), metadata: nil, client: nil, granted: nil).length
            changed = true
        }
        if final.uploadID == nil, let length = final.info.length, length >= Int64(objects.partSize(of: final)) {
            final.uploadID = try await objects.beginMultipart(final)
            changed = true
        }
        if changed { etag = try await objects.save(final, id: id, replacing: etag) }
        var sources: [TusObjects.JoinedObject] = []
        for (index, (state, etag)) in saved.enumerated() {
            var marked = state
            marked.info.joinedInto = id
            try leases[index].check()
            _ = try await objects.save(marked, id: partials[index], replacing: etag)
            if let whole = try await objects.wholeObject(of: marked) { sources.append(whole) }
        }
        var rest = ByteBuffer()
        var parts: [TusObjects.State.Part] = []
        if let uploadID = final.uploadID {
            parts = try await objects.join(sources, into: final.key, uploadID: uploadID, partSize: objects.partSize(of: final))
        } else {
            // Fewer bytes than a part in all: read, and stored as one object.
            for source in sources {
                var bytes = try await objects.store.bytes(of: source.key, range: 0..<source.size, what: "reading \(source.key) to join it")
                rest.writeBuffer(&bytes)
            }
        }
        for held in leases { try held.check() }
        _ = try await objects.complete(id, state: final, etag: etag, parts: parts, uploadID: final.uploadID, rest: rest, digest: nil,
                                       holding: leases[leases.count - 1], basePath: basePath, logger: logger)
        // Its completion recorded, the final upload holds every byte: the partial uploads'
        // objects go (their states stay, naming it, until they expire).
        for (state, _) in saved {
            for key in Set([state.key, state.tail?.key].compactMap { $0 }) where key.hasPrefix(objects.statePrefix) {
                await objects.removeObject(key)
            }
        }
        for partial in partials { digests.remove(partial) }
    }

    /// The final uploads that `saved` partial uploads were joined into (`named`), when
    /// none of them is whole and none awaits them: their receivers stopped mid-join, and
    /// the partial uploads' bytes are all there, to be joined anew. Empty when they name
    /// none; nil when one is whole, awaits them, or is gone (their bytes may be too).
    private func unfinishedJoins(_ named: Set<String?>, of saved: [SavedPartial], in objects: TusObjects) async throws -> [String]? {
        guard saved.allSatisfy({ $0.state.info.awaitedBy == nil }) else { return nil }
        var unfinished: [String] = []
        for case let final? in named {
            guard let (state, _) = try await objects.load(final), !state.info.isWhole else { return nil }
            unfinished.append(final)
        }
        return unfinished
    }

    /// Removes `final`, a join that never finished, its multipart upload aborted, under its
    /// lease — unless it is whole by now; best effort (else it expires).
    private func removeUnfinishedJoin(_ final: String, in objects: TusObjects) async {
        try? await objects.holdingLease(final) { held in
            guard let (state, _) = try await objects.load(final), !state.info.isWhole else { return }
            try await objects.remove(final, state: state, storedObject: false, holding: held)
        }
    }
}
