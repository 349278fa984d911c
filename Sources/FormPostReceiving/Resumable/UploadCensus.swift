import Synchronization

/// The resumable uploads a receiver keeps, in memory: for each, the client address that
/// created it, when, when it was last active, whether it is complete and how many bytes it
/// has received. Taken once
/// from the state directory when the receiver starts (``UploadStore``), then kept up to date
/// as uploads are created, completed and removed, so that admitting a creation
/// (``UploadAdmission``) neither lists the directory nor reads a state, and a sweep
/// (``UploadExpiry``) walks it instead of the directory.
///
/// What it says may lag behind the disk (a form completed by moving its parts, an upload
/// whose first bytes arrived): a reader that needs it exact looks at the upload's files
/// (``UploadStore/look(_:)``) and records what it found (``record(_:_:)``).
final class UploadCensus: Sendable {
    /// One upload kept.
    struct Entry: Sendable, Equatable {
        /// The address of the client that created it (``ClientAddress``); nil when unknown.
        let client: String?
        /// When it was created, in seconds since 1970.
        let created: Double
        /// When it last received a byte or changed state, as its files said when last
        /// looked at (``UploadStore/lastActivity(_:)``), in seconds since 1970: its expiry
        /// counts from then (``UploadExpiry``).
        var active: Double
        /// Whether it is being created: its files may not be there yet.
        var creating = false
        /// Whether every byte arrived and it was stored (only its state is kept).
        var complete = false
        /// The bytes it had received when last looked at, while in progress: they count
        /// towards its client's bytes in progress (``UploadAdmission``).
        var received: Int64 = 0
        /// When its files were last looked at, in seconds since 1970.
        var looked: Double?

        /// Whether its files may be looked at again at `now` (seconds since 1970): not
        /// while it is being created, and at most once a second
        /// (``UploadAdmission/lookInterval``), so that a flood of creations refused or
        /// admitted reads each upload's files at most once a second.
        func mayBeLookedAt(now: Double) -> Bool {
            !creating && (looked ?? 0) < now - UploadAdmission.lookInterval
        }

        /// An upload created at `created` (seconds since 1970) by `client`, active then
        /// or, when its files say so, at `active`.
        init(client: String?, created: Double, active: Double? = nil, creating: Bool = false) {
            self.client = client
            self.created = created
            self.active = active ?? created
            self.creating = creating
        }
    }

    /// What an upload's files say of it.
    enum Look: Equatable {
        /// Its state and data are gone: it was removed.
        case gone
        /// Its state is there, its data is not: it is complete.
        case complete
        /// Its data is there, holding `bytes`.
        case inProgress(bytes: Int64)
    }

    private let entries: Mutex<[String: Entry]>

    init() {
        entries = Mutex([:])
    }

    /// Every upload kept, with what is known of it.
    var all: [String: Entry] { entries.withLock { $0 } }

    /// What is known of `id`.
    func entry(_ id: String) -> Entry? { entries.withLock { $0[id] } }

    /// Runs `body` on the uploads kept, under the census's lock: it must not block.
    func withEntries<T>(_ body: (inout [String: Entry]) throws -> T) rethrows -> T {
        try entries.withLock { try body(&$0) }
    }

    /// Notes that the creation of `id` ended: its files are there.
    func created(_ id: String) {
        entries.withLock { $0[id]?.creating = false }
    }

    /// Notes that `id` is complete.
    func completed(_ id: String) {
        entries.withLock { $0[id]?.complete = true }
    }

    /// Forgets `id`.
    func remove(_ id: String) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    /// Records what the files of `id` said, `look` and their last activity `active` (nil:
    /// unknown), at `now` (seconds since 1970): a gone upload is forgotten (unless it is
    /// being created: its files are not there yet).
    func record(_ id: String, _ look: Look, active: Double?, at now: Double) {
        entries.withLock { entries in
            guard var entry = entries[id], !entry.creating else { return }
            entry.looked = now
            if let active { entry.active = active }
            switch look {
            case .gone:
                entries[id] = nil
                return
            case .complete:
                entry.complete = true
                entry.received = 0
            case .inProgress(let bytes):
                entry.complete = false
                entry.received = bytes
            }
            entries[id] = entry
        }
    }
}
