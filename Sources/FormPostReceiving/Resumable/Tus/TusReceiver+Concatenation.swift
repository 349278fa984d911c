#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// tus's concatenation on the disk: partial uploads (`Upload-Concat: partial`) are sent
/// like any upload — at once, each resuming on its own — and are not stored when complete;
/// a final upload (`Upload-Concat: final;URL URL…`) joins them, of the same client (address
/// and granted metadata), in its order, into the stored file, whose SHA-256 in the receipt
/// is that of the whole file: at once when each is complete, else (concatenation-unfinished)
/// once the last of them is, or when the final upload is asked for after. Once joined, the
/// partial uploads' bytes go and their states name the final upload: asked for again (its
/// answer lost), the same final is answered with the same upload. On object storage,
/// ``createFinalObject(joining:metadata:client:granted:in:)``.
extension TusReceiver {
    /// `POST` of a final upload joining `partials`, with `metadata` (its file's name and
    /// type), for `client`, with what its authorization `granted`: stored before it is
    /// answered when each partial upload is complete, else answered at once, without an
    /// offset, each partial upload naming it. Each partial upload is held meanwhile.
    ///
    /// - Throws: ``TusFailure`` 400 for a partial upload that does not exist, is not partial,
    ///   another client's, or joined into another upload; 423 while a request holds one;
    ///   413 past the largest upload; 503 when ``UploadAdmission`` refuses.
    func createFinal(joining partials: [String], metadata: String?, client: String?, granted: [String: String]?) async throws -> ReceiverResponse {
        var held: [(id: String, token: UInt64)] = []
        defer { for (id, token) in held { locks.release(id, token: token) } }
        var infos: [TusUploadInfo] = []
        var complete = true
        for id in partials {
            guard let token = await locks.acquireAfterBackground(id) else { throw TusFailure(.locked, "a request is appending to the partial upload \(id)") }
            held.append((id, token))
            let upload: DirectoryUpload<TusUploadInfo>
            do {
                upload = try await directory.current(id, holding: token, finishing: true)
            } catch UploadStorageFailure.notFound, UploadStorageFailure.expired {
                throw TusFailure(.badRequest, "the partial upload \(id) does not exist")
            }
            let (info, offset) = (upload.info, upload.offset)
            complete = try Self.checkJoinable(info, id: id, at: offset, client: client, granted: granted) && complete
            infos.append(info)
        }
        let named = Set(infos.map(\.finalNamed))
        if named != [nil] {
            return try await joinedBefore(named, partials: partials) { final in
                let upload = try await directory.current(final, holding: nil, finishing: true)
                return (upload.info, upload.offset)
            }
        }
        let info = try finalInfo(joining: partials, infos: infos, metadata: metadata, client: client, granted: granted)
        return try await admitted {
            try await directory.creating(info, client: client, claim: .refusedWhileHeld) { id, _ in
                ReceiverMetrics.upload(.tus, .created)
                var response = ReceiverResponse(status: .created, headers: [.location: basePath + "/" + id, .uploadExpires: lifetime.httpDate(created: info.created)])
                if complete {
                    try await joinHeld(id, info: info, partials: partials, infos: infos, answered: false)
                    response.headers[.uploadOffset] = String(info.length ?? 0)
                } else {
                    let (store, awaited) = (self.store, infos.map { partial in
                        var awaited = partial
                        awaited.awaitedBy = id
                        return awaited
                    })
                    try await threadPool.runIfActive {
                        for (partial, info) in zip(partials, awaited) { try store.save(info, id: partial) }
                    }
                }
                return response
            }
        }
    }

    /// Joins `final` if it awaits partial uploads (concatenation-unfinished) that are all
    /// complete now (``joinAwaitedInDirectory(_:)`` or ``joinAwaitedObject(_:in:)``).
    func joinAwaited(_ final: String) async {
        if let objects { await joinAwaitedObject(final, in: objects) } else { await joinAwaitedInDirectory(final) }
    }

    /// Joins `final` in the directory if it awaits partial uploads (concatenation-unfinished) that are all
    /// complete now; nothing when one is not, or a request holds one or the final upload (a
    /// later request on it tries again). A failure is logged, and tried again alike.
    func joinAwaitedInDirectory(_ final: String) async {
        guard let token = locks.acquire(final) else { return }
        defer { locks.release(final, token: token) }
        var held: [(id: String, token: UInt64)] = []
        defer { for (id, token) in held { locks.release(id, token: token) } }
        do {
            let upload = try await directory.current(final, holding: token, finishing: true)
            var (info, offset) = (upload.info, upload.offset)
            guard case .final(let partials) = info.concat, info.file == nil, info.completing == nil, !info.isWhole(at: offset) else { return }
            var infos: [TusUploadInfo] = []
            for id in partials {
                guard let token = locks.acquire(id) else { return }
                held.append((id, token))
                let kept = try await directory.current(id, holding: token, finishing: true)
                let (partial, offset) = (kept.info, kept.offset)
                guard partial.finalNamed == final || partial.finalNamed == nil,
                      try Self.checkJoinable(partial, id: id, at: offset, client: info.client, granted: info.granted) else { return }
                infos.append(partial)
            }
            info.length = try finalInfo(joining: partials, infos: infos, metadata: info.metadata, client: info.client, granted: info.granted).length
            let (store, saved) = (self.store, info)
            try await threadPool.runIfActive { try store.save(saved, id: final) }
            try await joinHeld(final, info: info, partials: partials, infos: infos, answered: true)
        } catch {
            logger.error("upload \(RequestLogLine.shortID(final)): joining its partial uploads failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
        }
    }

    /// Joins `partials` (`infos`, each complete) into the final upload `id` (`info`, its
    /// length theirs), held with them, and stores it. When the join fails, the final upload
    /// goes if it was not `answered`, else its data is emptied for the next attempt; the
    /// partial uploads stay.
    private func joinHeld(_ id: String, info: TusUploadInfo, partials: [String], infos: [TusUploadInfo], answered: Bool) async throws {
        let store = self.store
        // Until it is stored, HEAD answers the final upload as not joined: its data reaches
        // its length before it is stored.
        unverified.begin(id, at: 0)
        defer { try? unverified.end(id) {} }
        let digest: SHA256Hasher
        do {
            digest = try await threadPool.runIfActive {
                // From its start: what a receiver killed mid-join wrote is written again.
                try store.cutBack(id, to: 0)
                return try Self.join(partials, into: id, in: store)
            }
        } catch {
            _ = try? await threadPool.runIfActive { answered ? try store.cutBack(id, to: 0) : store.remove(id) }
            throw error
        }
        // The final upload's data is whole and synced: the partial uploads name it, and their
        // bytes go. A completion that fails now is taken up again (the final's data is at
        // its length), and the same final asked for again is answered with this one.
        let tombstones = infos.map { partial in
            var joined = partial
            joined.joinedInto = id
            return joined
        }
        try await threadPool.runIfActive {
            for (partial, tombstone) in zip(partials, tombstones) {
                try store.save(tombstone, id: partial)
                store.removeData(partial)
            }
        }
        for partial in partials { digests.remove(partial) }
        _ = try await directory.completeNow(id, info: info, digest: digest)
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
    /// name it and it is still there (`reading` it: its information and offset) — its
    /// offset told once it is whole.
    ///
    /// - Throws: ``TusFailure`` 400 when they do not.
    func joinedBefore(_ named: Set<String?>, partials: [String],
                      reading: (String) async throws -> (info: TusUploadInfo, offset: Int64)) async throws -> ReceiverResponse {
        // Partial uploads not named yet (a receiver stopped while it named them) are the
        // final's all the same: it names them in its order.
        let finals = Set(named.compactMap { $0 })
        guard finals.count == 1, let final = finals.first else {
            throw TusFailure(.badRequest, "the partial uploads named are joined into other uploads")
        }
        let (info, offset): (TusUploadInfo, Int64)
        do {
            (info, offset) = try await reading(final)
        } catch let failure as TusFailure where failure.status == .notFound || failure.status == .gone {
            throw TusFailure(.badRequest, "the partial uploads named were joined into an upload that is gone")
        } catch let failure as UploadStorageFailure where failure == .notFound || failure == .expired {
            throw TusFailure(.badRequest, "the partial uploads named were joined into an upload that is gone")
        }
        guard info.concat == .final(partials: partials) else {
            throw TusFailure(.badRequest, "the partial uploads named were joined in another order")
        }
        var response = ReceiverResponse(status: .created, headers: [.location: basePath + "/" + final, .uploadExpires: lifetime.httpDate(created: info.created)])
        if info.isWhole(at: offset) { response.headers[.uploadOffset] = String(offset) }
        return response
    }

    /// Writes the data of `partials`, in order, into the data of `id` (empty), syncs it,
    /// and returns the SHA-256 of all of it, read as it is copied. It blocks on the file
    /// system.
    static func join(_ partials: [String], into id: String, in store: UploadStore) throws -> SHA256Hasher {
        let output = try store.openForAppend(id)
        defer { close(output) }
        var digest = SHA256Hasher()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for partial in partials {
            let input = open(store.dataPath(partial), O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw ReceiverFailure.storing("joining partial uploads failed", errno: errno) }
            defer { close(input) }
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                guard count >= 0 else { throw ReceiverFailure.storing("joining partial uploads failed", errno: errno) }
                if count == 0 { break }
                try buffer.withUnsafeBytes { bytes in
                    let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                    digest.update(bufferPointer: chunk)
                    var written = 0
                    while written < count {
                        let result = write(output, chunk.baseAddress! + written, count - written)
                        guard result > 0 else { throw ReceiverFailure.storing("joining partial uploads failed", errno: errno) }
                        written += result
                    }
                }
            }
        }
        try FileSync.data(output, what: "joining partial uploads failed")
        return digest
    }
}
