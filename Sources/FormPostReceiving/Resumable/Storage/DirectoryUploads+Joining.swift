#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests

/// tus's concatenation in the directory: the partial uploads' data files copied, in order,
/// into the final upload's, read once for its SHA-256 as they are copied, synced; only then
/// do the partial uploads name it and their data go.
extension DirectoryUploads: UploadJoining where Info == TusUploadInfo {
    /// False: partial uploads name a final upload only once its data is whole and synced;
    /// a completion that fails after is taken up again (``CompletionRetries``).
    func isUnfinishedJoin(_ final: DirectoryUpload<TusUploadInfo>) -> Bool { false }

    /// Copies the partial uploads' data into the final upload's (from its start: what a
    /// server stopped mid-join wrote is written again), then marks each partial upload
    /// joined and removes its data, then stores the final upload. When the copy fails, the
    /// final upload goes if no answer named it yet, else its data is emptied for the next
    /// attempt.
    func join(_ partials: [JoiningPartial<DirectoryUpload<TusUploadInfo>, UInt64>], into final: DirectoryUpload<TusUploadInfo>, id: String,
              holding hold: UInt64, answered: Bool) async throws {
        let (store, ids) = (self.store, partials.map(\.id))
        // Until it is stored, HEAD answers the final upload as not joined: its data reaches
        // its length before it is stored.
        unverified.begin(id, at: 0)
        defer { try? unverified.end(id) {} }
        let digest: SHA256Hasher
        do {
            digest = try await threadPool.runIfActive {
                try store.cutBack(id, to: 0)
                return try Self.copy(ids, into: id, in: store)
            }
        } catch {
            _ = try? await threadPool.runIfActive { answered ? try store.cutBack(id, to: 0) : store.remove(id) }
            throw error
        }
        // The final upload's data is whole and synced: the partial uploads name it, and their
        // bytes go. A completion that fails now is taken up again (the final's data is at
        // its length), and the same final asked for again is answered with this one.
        let tombstones = partials.map { partial in
            var joined = partial.upload.info
            joined.joinedInto = id
            return joined
        }
        try await threadPool.runIfActive {
            for (partial, tombstone) in zip(ids, tombstones) {
                try store.save(tombstone, id: partial)
                store.removeData(partial)
            }
        }
        for partial in ids { digests.remove(partial) }
        _ = try await completeNow(id, info: final.info, digest: digest)
    }

    /// Writes the data of `partials`, in order, into the data of `id` (empty), syncs it,
    /// and returns the SHA-256 of all of it, read as it is copied. It blocks on the file
    /// system.
    static func copy(_ partials: [String], into id: String, in store: UploadStore) throws -> SHA256Hasher {
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
