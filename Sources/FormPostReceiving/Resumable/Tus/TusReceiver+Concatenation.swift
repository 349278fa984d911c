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
/// a final upload (`Upload-Concat: final;URL URL…`) joins complete ones of the same client
/// (address and granted metadata), in its order, into the stored file, whose SHA-256 in the
/// receipt is that of the whole file. Once joined, the partial uploads' bytes go and their
/// states name the final upload: asked for again (its answer lost), the same final is
/// answered with the same upload. On object storage, ``createFinalObject(joining:metadata:client:granted:in:)``.
extension TusReceiver {
    /// `POST` of a final upload joining `partials`, each complete: stored before it is
    /// answered, with `metadata` (its file's name and type), for `client`, with what its
    /// authorization `granted`. Each partial upload is held meanwhile.
    ///
    /// - Throws: ``TusFailure`` 400 for a partial upload that does not exist, is not partial,
    ///   not complete, another client's, or joined into another upload; 423 while a request
    ///   holds one; 413 past the largest upload; 503 when ``UploadAdmission`` refuses.
    func createFinal(joining partials: [String], metadata: String?, client: String?, granted: [String: String]?) async throws -> ReceiverResponse {
        var held: [(id: String, token: UInt64)] = []
        defer { for (id, token) in held { locks.release(id, token: token) } }
        var infos: [TusUploadInfo] = []
        for id in partials {
            guard let token = await locks.acquireAfterBackground(id) else { throw TusFailure(.locked, "a request is appending to the partial upload \(id)") }
            held.append((id, token))
            let (info, offset): (TusUploadInfo, Int64)
            do {
                (info, offset) = try await current(id, held: true)
            } catch let failure as TusFailure where failure.status == .notFound || failure.status == .gone {
                throw TusFailure(.badRequest, "the partial upload \(id) does not exist")
            }
            try Self.checkJoinable(info, id: id, at: offset, client: client, granted: granted)
            infos.append(info)
        }
        let joined = Set(infos.map(\.joinedInto))
        if joined != [nil] {
            return try await joinedBefore(joined, partials: partials) { final in
                let (info, offset) = try await current(final)
                return (info, offset)
            }
        }
        let info = try finalInfo(joining: partials, infos: infos, metadata: metadata, client: client, granted: granted)
        let length = info.length ?? 0
        let (id, token) = try await admit(info, client: client)
        defer { locks.release(id, token: token) }
        ReceiverMetrics.upload(.tus, .created)
        let store = self.store
        let digest: SHA256Hasher
        do {
            digest = try await threadPool.runIfActive { try Self.join(partials, into: id, in: store) }
        } catch {
            // Nothing of it was answered: it goes, and the partial uploads stay.
            _ = try? await threadPool.runIfActive { store.remove(id) }
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
        try await completeNow(id, info: info, digest: digest)
        return ReceiverResponse(status: .created, headers: [
            .location: basePath + "/" + id, .uploadExpires: lifetime.httpDate(created: info.created), .uploadOffset: String(length),
        ])
    }

    /// An append to a final upload, refused.
    static var finalTakesNoAppends: TusFailure {
        TusFailure(.forbidden, "a final upload takes no appends: its bytes are its partial uploads'")
    }

    /// Checks that the upload `id`, `info` at `offset`, can be joined by a final upload of
    /// `client` with what its authorization `granted`.
    ///
    /// - Throws: ``TusFailure`` 400 when it is not partial, another client's, or not complete.
    static func checkJoinable(_ info: TusUploadInfo, id: String, at offset: Int64, client: String?, granted: [String: String]?) throws {
        guard info.concat == .partial else { throw TusFailure(.badRequest, "the upload \(id) is not a partial upload (Upload-Concat: partial)") }
        guard info.client == client, info.granted == granted else {
            throw TusFailure(.badRequest, "the partial upload \(id) is another client's")
        }
        guard let whole = info.length, info.verified == nil, offset == whole else {
            throw TusFailure(.badRequest, "the partial upload \(id) is not complete: a final upload joins complete ones")
        }
    }

    /// The final upload joining `partials` (`infos`, each joinable), with `metadata`, for
    /// `client`, with what its authorization `granted`.
    ///
    /// - Throws: ``TusFailure`` 413 past the largest upload.
    func finalInfo(joining partials: [String], infos: [TusUploadInfo], metadata: String?, client: String?,
                   granted: [String: String]?) throws -> TusUploadInfo {
        let length = infos.reduce(0) { $0 + ($1.length ?? 0) }
        guard length <= maxSize else { throw TusFailure(.contentTooLarge, "the joined upload exceeds the limit of \(maxSize) bytes") }
        return TusUploadInfo(length: length, metadata: metadata, created: Date().timeIntervalSince1970, client: client, granted: granted,
                             concat: .final(partials: partials))
    }

    /// The answer to a final upload whose partial uploads were joined before (`joined`: the
    /// uploads they name): that upload again when they all name it and it is still there
    /// (`reading` it: its information and offset).
    ///
    /// - Throws: ``TusFailure`` 400 when they do not.
    func joinedBefore(_ joined: Set<String?>, partials: [String],
                      reading: (String) async throws -> (info: TusUploadInfo, offset: Int64)) async throws -> ReceiverResponse {
        guard joined.count == 1, let final = joined.first ?? nil else {
            throw TusFailure(.badRequest, "the partial uploads named were joined into other uploads")
        }
        let (info, offset): (TusUploadInfo, Int64)
        do {
            (info, offset) = try await reading(final)
        } catch let failure as TusFailure where failure.status == .notFound || failure.status == .gone {
            throw TusFailure(.badRequest, "the partial uploads named were joined into an upload that is gone")
        } catch let failure as ObjectUploadFailure where failure == .notFound || failure == .expired {
            throw TusFailure(.badRequest, "the partial uploads named were joined into an upload that is gone")
        }
        guard info.concat == .final(partials: partials) else {
            throw TusFailure(.badRequest, "the partial uploads named were joined in another order")
        }
        return ReceiverResponse(status: .created, headers: [
            .location: basePath + "/" + final, .uploadExpires: lifetime.httpDate(created: info.created), .uploadOffset: String(offset),
        ])
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
