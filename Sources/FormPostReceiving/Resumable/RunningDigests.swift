import FormPostDigests
import Synchronization

/// The running SHA-256 of resumable uploads in progress, kept between appends while the
/// server runs, so that a completed upload's digest needs no second read of its bytes. An
/// upload without one (after a restart, or a failed write) is hashed from its file at completion.
final class RunningDigests: Sendable {
    /// A hash and how many bytes it covers. Only one append holds an upload's hash at a time
    /// (it is taken out, used, and put back under the upload's lock), so it is never shared.
    private struct Running: Sendable {
        let offset: Int64
        let hasher: SHA256Hasher
    }

    private let running = Mutex<[String: Running]>([:])

    /// Takes out the running hash of `id` if it covers exactly its first `offset` bytes (a
    /// new hash at offset 0), or nil.
    func take(_ id: String, at offset: Int64) -> SHA256Hasher? {
        let kept = running.withLock { $0.removeValue(forKey: id) }
        if let kept, kept.offset == offset { return kept.hasher }
        return offset == 0 ? SHA256Hasher() : nil
    }

    /// Keeps `hasher`, which covers the first `offset` bytes of `id`.
    func put(_ id: String, _ hasher: SHA256Hasher, offset: Int64) {
        let kept = Running(offset: offset, hasher: hasher)
        running.withLock { $0[id] = kept }
    }

    /// Forgets `id`.
    func remove(_ id: String) {
        _ = running.withLock { $0.removeValue(forKey: id) }
    }
}
