import Synchronization

/// tus appends under way whose bytes count only once their checksum holds — or, for an
/// append without a checksum, once they are synced and the append has ended: while one is
/// written, the upload's offset is still where it began (what `HEAD` answers), not the
/// size of its data, which holds bytes that may yet be undone or lost. Settling an append (undoing
/// it, or keeping it) and reading that upload's offset never overlap; other uploads' offsets
/// are read meanwhile (each upload has a lock of its own; the table of them is held only to
/// find one, or to measure an offset no append is under way for). This is the server's memory of them; the upload's state says so too
/// (``TusUploadInfo/verified``), for a server killed meanwhile.
final class UnverifiedAppends: Sendable {
    /// One upload's unverified append: where it began, nil once settled.
    private final class Append: Sendable {
        let start: Mutex<Int64?>

        init(_ start: Int64) {
            self.start = Mutex(start)
        }
    }

    private let appends = Mutex<[String: Append]>([:])

    /// Notes that an append to `id` from `offset` is being written unverified.
    func begin(_ id: String, at offset: Int64) {
        let append = Append(offset)
        appends.withLock { $0[id] = append }
    }

    /// Ends the unverified append to `id` (if one is under way), running `settle` first —
    /// which undoes it when its bytes must not count, and saves the upload's state; no
    /// offset of `id` is read meanwhile.
    func end(_ id: String, settling settle: () throws -> Void) throws {
        guard let append = appends.withLock({ $0[id] }) else { return }
        defer { appends.withLock { if $0[id] === append { $0[id] = nil } } }
        try append.start.withLock { start in
            guard start != nil else { return }
            defer { start = nil }
            try settle()
        }
    }

    /// The offset of upload `id`: where an unverified append to it began, or else what
    /// `measure` finds (the size of its data) — measured before an append can begin (with
    /// none under way, under the table's lock: a `stat`).
    func offset(of id: String, measure: () -> Int64) -> Int64 {
        var measured: Int64 = 0
        let append = appends.withLock { appends -> Append? in
            if appends[id] == nil { measured = measure() }
            return appends[id]
        }
        guard let append else { return measured }
        return append.start.withLock { $0 ?? measure() }
    }
}
