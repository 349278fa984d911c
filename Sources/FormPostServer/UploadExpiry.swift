import Foundation
import Logging
import Synchronization

/// How long resumable uploads are kept: each is removed ``lifetime`` after it began,
/// complete or not (a completed upload's stored file stays). Requests on an expired upload
/// find it gone at once; the sweep that removes the others runs when uploads are created.
final class UploadExpiry: Sendable {
    let lifetime: Duration

    init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    private var seconds: Double { Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18 }

    /// Whether an upload created at `created` (seconds since 1970) has expired.
    func hasExpired(created: Double) -> Bool {
        Date().timeIntervalSince1970 - created > seconds
    }

    /// The seconds an upload created at `created` has left (the IETF draft's `max-age`; at
    /// most 15 digits, as a structured field's integer).
    func secondsLeft(created: Double) -> Int64 {
        Int64(min(max(0, (created + seconds - Date().timeIntervalSince1970).rounded(.down)), 999_999_999_999_999))
    }

    /// When an upload created at `created` will be removed, as an HTTP date (tus's `Upload-Expires`).
    func httpDate(created: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: created + seconds))
    }

    /// Removes the uploads of `store` that have expired and no request holds, unless a
    /// sweep ran less than `interval` ago (each reads every upload's state): ``sweepInterval``,
    /// or ``sweepIntervalWhenFull`` when the uploads in progress reached their limit. `created`
    /// reads when an upload began (nil: unreadable, left alone).
    /// It blocks on the file system: at start, or on NIO's thread pool.
    func sweep(_ store: UploadStore, locks: UploadLocks, digests: RunningDigests, logger: Logger, interval: Duration = sweepInterval,
               created: (String) -> Double?) {
        let now = ContinuousClock.now
        let due = lastSweep.withLock { last in
            guard last.map({ $0.duration(to: now) >= interval }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        for id in store.ids() {
            guard let began = created(id), hasExpired(created: began), Self.remove(id, from: store, locks: locks, digests: digests) else { continue }
            logger.notice("removed upload \(id), begun more than \(lifetime) ago")
        }
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

    /// The least time between two sweeps.
    static let sweepInterval: Duration = .seconds(10)
    /// The least time between two sweeps once the uploads in progress reached their limit:
    /// an expired upload makes room at once, and a flood of refused creations still reads
    /// the states at most once a second.
    static let sweepIntervalWhenFull: Duration = .seconds(1)
    private let lastSweep = Mutex<ContinuousClock.Instant?>(nil)
}
