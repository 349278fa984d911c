#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import ResumableHTTP
import NIOPosix
import Synchronization

/// How long resumable uploads are kept: each is removed ``lifetime`` after it began,
/// complete or not (a completed upload's stored file stays), and an incomplete one that
/// has received no byte ``idle`` after it began is removed then — so that uploads created
/// and left empty do not hold their place (``UploadAdmission``) for a day. Requests on an
/// expired upload find it gone at once; the others are removed by a sweep of the
/// receiver's ``UploadCensus``, one at a time, in the background (``startSweeping(_:locks:digests:logger:threadPool:)``)
/// and at start. A sweep reads no state: it looks at the data file of each incomplete
/// upload (one `stat`), nothing of a complete one.
final class UploadExpiry: Sendable {
    let lifetime: Duration
    let idle: Duration

    init(lifetime: Duration, idle: Duration) {
        self.lifetime = lifetime
        self.idle = idle
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Whether an upload created at `created` (seconds since 1970) has expired.
    func hasExpired(created: Double) -> Bool {
        Date().timeIntervalSince1970 - created > Self.seconds(lifetime)
    }

    /// Whether an upload created at `created` that has received nothing is idle: past ``idle``.
    func isIdle(created: Double) -> Bool {
        Date().timeIntervalSince1970 - created > Self.seconds(idle)
    }

    /// The seconds an upload created at `created` has left (the IETF draft's `max-age`; at
    /// most 15 digits, as a structured field's integer).
    func secondsLeft(created: Double) -> Int64 {
        Int64(min(max(0, (created + Self.seconds(lifetime) - Date().timeIntervalSince1970).rounded(.down)), 999_999_999_999_999))
    }

    /// When an upload created at `created` will be removed, as an HTTP date (tus's `Upload-Expires`).
    func httpDate(created: Double) -> String {
        HTTPDate.string(secondsSince1970: created + Self.seconds(lifetime))
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
            if hasExpired(created: entry.created) {
                removeEnded(id, from: store, locks: locks, digests: digests, logger: logger)
            } else if !entry.complete {
                incomplete.append(id)
            }
        }
        lookAgain(at: incomplete, in: store, locks: locks, digests: digests, logger: logger)
    }

    /// Sweeps `store` every ``sweepInterval`` on `threadPool`, from a task that ends once
    /// this expiry is gone (no receiver holds it).
    func startSweeping(_ store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger, threadPool: NIOThreadPool) {
        let interval = sweepInterval
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let expiry = self else { return }
                try? await threadPool.runIfActive { expiry.sweep(store, locks: locks, digests: digests, logger: logger) }
            }
        }
    }

    /// Looks at the files of the uploads `ids` and records in the census what they say
    /// (complete, gone, bytes received); removes those that have received nothing and are
    /// idle, unless a request holds them. It blocks on the file system.
    func lookAgain(at ids: [String], in store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger) {
        for id in ids {
            guard let entry = store.census.entry(id), !entry.creating else { continue }
            let look = store.look(id)
            store.census.record(id, look, at: Date().timeIntervalSince1970)
            if look == .inProgress(bytes: 0), isIdle(created: entry.created) {
                removeEnded(id, from: store, locks: locks, digests: digests, logger: logger)
            }
        }
    }

    /// Removes the upload `id` if it has ended — expired, idle (incomplete, nothing
    /// received, past ``idle``), or with `evictingComplete` complete (only its state goes;
    /// its stored file stays) — as its files say under its lock; nothing when a request
    /// holds it. It blocks on the file system.
    func removeEnded(_ id: String, from store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger,
                     evictingComplete: Bool = false) {
        guard let entry = store.census.entry(id), let token = locks.acquire(id) else { return }
        defer { locks.release(id, token: token) }
        let look = store.look(id)
        let reason: String
        if hasExpired(created: entry.created) {
            reason = "begun more than \(lifetime) ago"
        } else if look == .inProgress(bytes: 0), isIdle(created: entry.created) {
            reason = "idle: nothing received in \(idle)"
        } else if evictingComplete, look == .complete {
            reason = "complete, the oldest kept of its client's"
        } else {
            store.census.record(id, look, at: Date().timeIntervalSince1970)
            return
        }
        Self.remove(id, from: store, locks: locks, digests: digests, held: true)
        logger.notice("removed upload \(id), \(reason)")
    }

    /// Removes the upload `id` — its state, data and running digest — unless another
    /// request holds it (then a later sweep will); whether it did. `held`: the caller holds
    /// it. It blocks on the file system.
    @discardableResult
    static func remove(_ id: String, from store: UploadStore, locks: UploadLocks, digests: RunningDigests, held: Bool = false) -> Bool {
        let token = held ? nil : locks.acquire(id)
        guard held || token != nil else { return false }
        store.remove(id)
        digests.remove(id)
        if let token { locks.release(id, token: token) }
        return true
    }

    private let sweeping = Mutex(false)
}
