#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import ResumableHTTP
import NIOPosix
import Synchronization

/// How long resumable uploads are kept, counted from their last activity (the newest
/// modification of their files, ``UploadStore/lastActivity(_:)``: a byte received, a state
/// saved): an incomplete upload that received nothing for ``idle`` is removed, and any
/// upload, complete or not (a completed upload's stored file stays), ``lifetime`` after its
/// last activity — so an upload still receiving data is never removed, and uploads left
/// empty or fed a byte now and then do not hold their place (``UploadAdmission``) for a
/// day. Requests on an expired upload find it gone at once; the others are removed by a
/// sweep of the receiver's ``UploadCensus``, one at a time, in the background
/// (``startSweeping(_:locks:digests:logger:threadPool:completeFull:)``) and at start. A sweep reads no
/// state: it looks at the files of each incomplete upload (a few `stat`s), nothing of a
/// complete one until its census says it expired.
final class UploadExpiry: Sendable {
    let lifetime: Duration
    let idle: Duration
    /// The parses of forms in progress kept in memory (the IETF draft's receiver), which a
    /// removed upload leaves.
    let progresses: FormProgresses?
    /// The uploads whose every byte is acknowledged while their completion failed: never
    /// expired nor removed (a client that read their full offset takes them for stored),
    /// however long their completion keeps failing; each sweep says so.
    let retries: CompletionRetries?
    /// The protocol its uploads came by, for ``ReceiverMetrics``.
    let kind: UploadProtocol

    init(lifetime: Duration, idle: Duration, progresses: FormProgresses? = nil, retries: CompletionRetries? = nil,
         kind: UploadProtocol) {
        self.kind = kind
        self.lifetime = lifetime
        self.idle = idle
        self.progresses = progresses
        self.retries = retries
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// When the upload `id` of `store`, created at `created` (seconds since 1970), was last
    /// active: the newest modification of its files, or `created` when it has none. A few
    /// `stat`s.
    func lastActive(_ id: String, created: Double, in store: UploadStore) -> Double {
        store.lastActivity(id) ?? created
    }

    /// Whether the upload `id` of `store`, created at `created`, has expired: nothing
    /// happened to it for ``lifetime``. A few `stat`s.
    func hasExpired(_ id: String, created: Double, in store: UploadStore) -> Bool {
        if retries?.contains(id) == true { return false }
        return hasExpired(active: lastActive(id, created: created, in: store))
    }

    /// Whether an upload last active at `active` (seconds since 1970) has expired.
    func hasExpired(active: Double) -> Bool {
        Date().timeIntervalSince1970 - active > Self.seconds(lifetime)
    }

    /// Whether an incomplete upload last active at `active` is idle: past ``idle``.
    func isIdle(active: Double) -> Bool {
        Date().timeIntervalSince1970 - active > Self.seconds(idle)
    }

    /// The seconds an upload created at `created` has left (the IETF draft's `max-age`; at
    /// most 15 digits, as a structured field's integer).
    func secondsLeft(created: Double) -> Int64 {
        Int64(min(max(0, (created + Self.seconds(lifetime) - Date().timeIntervalSince1970).rounded(.down)), 999_999_999_999_999))
    }

    /// When an upload created at `created` will be removed, as an HTTP date (tus's `Upload-Expires`).
    func httpDate(created: Double) -> String {
        HTTPDate.string(secondsSince1970: removal(created: created))
    }

    /// When an upload created at `created` will be removed, in seconds since 1970.
    func removal(created: Double) -> Double {
        created + Self.seconds(lifetime)
    }

    /// The time between two background sweeps: 10 s, or half of ``idle`` when shorter.
    var sweepInterval: Duration { min(.seconds(10), max(idle / 2, .milliseconds(50))) }

    /// Removes the uploads of `store` that expired or are idle and no request holds, unless
    /// another sweep runs now (then it returns at once). It blocks on the file system: at
    /// start, or on NIO's thread pool.
    func sweep(_ store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger) {
        guard sweeping.withLock({ running in
            defer { running = true }
            return !running
        }) else { return }
        defer { sweeping.withLock { $0 = false } }
        var incomplete: [String] = []
        for (id, entry) in store.census.all where !entry.creating {
            if hasExpired(active: entry.active) {
                removeEnded(id, from: store, locks: locks, digests: digests, logger: logger)
            } else if !entry.complete {
                incomplete.append(id)
            }
        }
        lookAgain(at: incomplete, in: store, locks: locks, digests: digests, logger: logger)
    }

    /// Sweeps `store` every ``sweepInterval`` on `threadPool`, from a task that ends once
    /// this expiry is gone (no receiver holds it). First it reports the states the store
    /// found unreadable at start (``UploadStore/unreadableStates``): their uploads answer
    /// 404 and are never swept, their files kept for repair.
    /// Each sweep first runs `completeFull` with this expiry: the receiver's retry of
    /// completions that failed for uploads whose every byte is there (it must not hold
    /// this expiry, or the task would never end).
    func startSweeping(_ store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger, threadPool: NIOThreadPool,
                       completeFull: (@Sendable (UploadExpiry) -> Void)? = nil) {
        for path in store.unreadableStates {
            logger.error("the state of a resumable upload cannot be read: \(path) (torn, or not this receiver's); its files are kept for repair, and requests on it answer 404 until it is repaired or removed")
        }
        let interval = sweepInterval
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let expiry = self else { return }
                try? await threadPool.runIfActive {
                    completeFull?(expiry)
                    expiry.sweep(store, locks: locks, digests: digests, logger: logger)
                }
            }
        }
    }

    /// Looks at the files of the uploads `ids` and records in the census what they say
    /// (complete, gone, bytes received, last activity); removes those in progress that are
    /// idle, unless a request holds them. It blocks on the file system.
    func lookAgain(at ids: [String], in store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger) {
        for id in ids {
            guard let entry = store.census.entry(id), !entry.creating else { continue }
            let look = store.look(id)
            let active = store.lastActivity(id)
            store.census.record(id, look, active: active, at: Date().timeIntervalSince1970)
            if case .inProgress = look, isIdle(active: active ?? entry.created) {
                removeEnded(id, from: store, locks: locks, digests: digests, logger: logger)
            }
        }
    }

    /// Removes the upload `id` if it has ended — expired (inactive for ``lifetime``), idle
    /// (incomplete, inactive for ``idle``), or with `evictingComplete` complete (only its
    /// state goes; its stored file stays) — as its files say under its lock; nothing when a
    /// request holds it. It blocks on the file system.
    func removeEnded(_ id: String, from store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger,
                     evictingComplete: Bool = false) {
        guard let entry = store.census.entry(id), let token = locks.acquire(id, background: true) else { return }
        defer { locks.release(id, token: token) }
        let look = store.look(id)
        let active = lastActive(id, created: entry.created, in: store)
        if retries?.contains(id) == true {
            store.census.record(id, look, active: active, at: Date().timeIntervalSince1970)
            logger.warning("kept upload \(RequestLogLine.shortID(id)): its every byte is acknowledged and its completion still fails; it is tried again at each sweep")
            return
        }
        let isInProgress = if case .inProgress = look { true } else { false }
        let reason: String
        if hasExpired(active: active) {
            reason = "inactive for more than \(lifetime)"
        } else if isInProgress, isIdle(active: active) {
            reason = "idle: nothing received in \(idle)"
        } else if evictingComplete, look == .complete {
            reason = "complete, the oldest kept of its client's"
        } else {
            store.census.record(id, look, active: active, at: Date().timeIntervalSince1970)
            return
        }
        Self.remove(id, from: store, locks: locks, digests: digests, progresses: progresses, held: true)
        logger.notice("removed upload \(RequestLogLine.shortID(id)), \(reason)")
        if isInProgress { ReceiverMetrics.upload(kind, .expired) }
    }

    /// Removes the upload `id` — its state, data, running digest and kept form parse (of
    /// `progresses`) — unless another request holds it (then a later sweep will); whether
    /// it did. `held`: the caller holds it. It blocks on the file system.
    @discardableResult
    static func remove(_ id: String, from store: UploadStore, locks: UploadLocks, digests: RunningDigests, progresses: FormProgresses? = nil,
                       held: Bool = false) -> Bool {
        let token = held ? nil : locks.acquire(id)
        guard held || token != nil else { return false }
        store.remove(id)
        digests.remove(id)
        progresses?.remove(id)
        if let token { locks.release(id, token: token) }
        return true
    }

    private let sweeping = Mutex(false)
}
