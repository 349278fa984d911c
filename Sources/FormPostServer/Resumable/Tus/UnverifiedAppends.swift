import Synchronization

/// tus appends under way whose bytes count only once their checksum holds: while one is
/// written, the upload's offset is still where it began (what `HEAD` answers), not the
/// size of its data, which holds bytes that may yet be undone. Settling an append (undoing
/// it, or keeping it) and reading an offset never overlap. This is the server's memory of
/// them; the upload's state says so too (``TusUploadInfo/verified``), for a server killed
/// meanwhile.
final class UnverifiedAppends: Sendable {
    private let starts = Mutex<[String: Int64]>([:])

    /// Notes that an append to `id` from `offset` is being written unverified.
    func begin(_ id: String, at offset: Int64) {
        starts.withLock { $0[id] = offset }
    }

    /// Ends the unverified append to `id` (if one is under way), running `settle` first —
    /// which undoes it when its bytes must not count, and saves the upload's state; no
    /// offset is read meanwhile.
    func end(_ id: String, settling settle: () throws -> Void) throws {
        try starts.withLock { starts in
            guard starts[id] != nil else { return }
            defer { starts[id] = nil }
            try settle()
        }
    }

    /// The offset of upload `id`: where an unverified append to it began, or else what
    /// `measure` finds (the size of its data).
    func offset(of id: String, measure: () -> Int64) -> Int64 {
        starts.withLock { $0[id] ?? measure() }
    }
}
