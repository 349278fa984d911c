import Synchronization

/// The ``FormUploadProgress`` of resumable forms between their appends while the server
/// runs, so that an append goes on parsing where the last one stopped. One missing (after
/// a restart, a failed write, or when more forms are in progress than are kept) is made
/// again from what is stored: from `ID.data` and the noted digests of its file parts
/// (``FormSegments``), not their content.
final class FormProgresses: Sendable {
    /// A progress, taken out and put back under its upload's lock: never shared.
    private struct Kept: @unchecked Sendable {
        let progress: FormUploadProgress
    }

    /// What making parses again has cost since the server started.
    struct Rebuilds: Equatable, Sendable {
        /// How many parses were made again.
        var count = 0
        /// The bytes of what is stored read to make them (and to read the digests of file
        /// parts they left to their files).
        var bytesRead: Int64 = 0
    }

    private let kept = Mutex<(capacity: Int, all: [String: Kept], rebuilds: Rebuilds)>((64, [:], Rebuilds()))

    /// The most kept at once (64 unless set): each holds the form's text fields so far.
    var capacity: Int {
        get { kept.withLock { $0.capacity } }
        set { kept.withLock { $0.capacity = newValue } }
    }

    /// What making parses again has cost so far.
    var rebuilds: Rebuilds { kept.withLock { $0.rebuilds } }

    /// How many are kept now.
    var count: Int { kept.withLock { $0.all.count } }

    /// Notes a parse made again (`rebuilt`), or the digests of its parts read, by reading
    /// `bytesRead` bytes of what is stored.
    func noteRebuild(bytesRead: Int64, rebuilt: Bool = true) {
        kept.withLock {
            if rebuilt { $0.rebuilds.count += 1 }
            $0.rebuilds.bytesRead += bytesRead
        }
    }

    /// Takes out the progress of `id` if it covers exactly the form's first `offset` bytes.
    func take(_ id: String, at offset: Int64) -> FormUploadProgress? {
        let progress = kept.withLock { $0.all.removeValue(forKey: id) }?.progress
        return progress?.durable == offset ? progress : nil
    }

    /// Keeps `progress` of `id` (in place of another, when full).
    func put(_ id: String, _ progress: FormUploadProgress) {
        let entry = Kept(progress: progress)
        kept.withLock { state in
            if state.all.count >= state.capacity, state.all[id] == nil, let any = state.all.keys.first { state.all[any] = nil }
            state.all[id] = entry
        }
    }

    /// Forgets `id`.
    func remove(_ id: String) {
        _ = kept.withLock { $0.all.removeValue(forKey: id) }
    }
}
