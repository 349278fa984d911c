import Synchronization

/// The ``FormUploadProgress`` of resumable forms between their appends while the server
/// runs, so that an append goes on parsing where the last one stopped. One missing (after
/// a restart, a failed write, or when more forms are in progress than are kept) is made
/// again from what is stored.
final class FormProgresses: Sendable {
    /// A progress, taken out and put back under its upload's lock: never shared.
    private struct Kept: @unchecked Sendable {
        let progress: FormUploadProgress
    }

    private let kept = Mutex<[String: Kept]>([:])
    /// The most kept at once: each holds the form's text fields so far.
    let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// Takes out the progress of `id` if it covers exactly the form's first `offset` bytes.
    func take(_ id: String, at offset: Int64) -> FormUploadProgress? {
        let progress = kept.withLock { $0.removeValue(forKey: id) }?.progress
        return progress?.durable == offset ? progress : nil
    }

    /// Keeps `progress` of `id` (in place of another, when full).
    func put(_ id: String, _ progress: FormUploadProgress) {
        let entry = Kept(progress: progress)
        kept.withLock { all in
            if all.count >= capacity, all[id] == nil, let any = all.keys.first { all[any] = nil }
            all[id] = entry
        }
    }

    /// Forgets `id`.
    func remove(_ id: String) {
        _ = kept.withLock { $0.removeValue(forKey: id) }
    }
}
