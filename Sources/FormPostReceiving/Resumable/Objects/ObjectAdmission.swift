#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``UploadAdmission``'s limits for resumable uploads in object storage, as this receiver
/// sees them: the uploads it created since it started, counted (with their client address)
/// until it finds them stored (or joined into a final upload), removed or expired. The states
/// of the creating client's uploads are read again from the bucket before each creation (for
/// their bytes), and those of all counted against a limit before a creation is refused, each
/// at most once a second: one stored, removed or expired meanwhile — on any receiver — no
/// longer counts, and the bytes of one in progress are its saved offset. An upload that looks
/// expired is read again before it is dropped. The other receivers on the bucket count their
/// own uploads: behind N receivers, a client may hold N times the limits at most.
final class ObjectAdmission: Sendable {
    let rule: UploadAdmission
    /// The uploads this receiver created and has not found ended.
    let census = UploadCensus()

    init(rule: UploadAdmission) {
        self.rule = rule
    }

    /// The id of a new upload of `client` created at `created` in `store`, whose uploads
    /// expire `expiry` after their last activity; counted as being created (``created(_:)``
    /// once its state is saved, ``forget(_:)`` when that failed).
    ///
    /// - Throws: ``UploadAdmission/Refusal`` when a limit would be passed.
    func admit<Info>(client: String?, created: Double, in store: ObjectUploadStore<Info>, expiry: Duration) async throws -> String {
        // The client's uploads in progress, for the bytes they hold now.
        await lookAgain(at: stale { $0.client == client && client != nil && !$0.complete }, in: store, expiry: expiry)
        // Those that look expired (their activity as last read): read before they are dropped.
        await lookAgain(at: stale { !$0.complete && $0.active + expiry.seconds < Date().timeIntervalSince1970 }, in: store, expiry: expiry)
        var (decision, id) = reserve(client: client, created: created, expiry: expiry.seconds)
        if case .full(_, let recheck) = decision, !recheck.isEmpty {
            await lookAgain(at: recheck, in: store, expiry: expiry)
            (decision, id) = reserve(client: client, created: created, expiry: expiry.seconds)
        }
        switch decision {
        case .full(let message, _):
            throw UploadAdmission.Refusal(message: message)
        case .admitted(let removing):
            // Expired, or stored and past those kept: the bucket's sweep removes them.
            for ended in removing { census.remove(ended) }
            return id
        }
    }

    /// Notes that the upload `id` is created: its state is in the bucket.
    func created(_ id: String) {
        census.created(id)
    }

    /// Forgets the upload `id`: not created, stored or removed by this receiver.
    func forget(_ id: String) {
        census.remove(id)
    }

    /// Notes that the upload `id` is stored.
    func completed(_ id: String) {
        census.completed(id)
    }

    /// ``UploadAdmission/reserve(created:client:census:hasExpired:)`` on this receiver's
    /// census, an upload expiring `expiry` seconds after its last activity.
    private func reserve(client: String?, created: Double, expiry: Double) -> (UploadAdmission.Decision, String) {
        rule.reserve(created: created, client: client, census: census) { active in active + expiry < Date().timeIntervalSince1970 }
    }

    /// The uploads counted that `matches` and that were not read within the last second
    /// (nor are being created).
    private func stale(_ matches: (UploadCensus.Entry) -> Bool) -> [String] {
        let now = Date().timeIntervalSince1970
        return census.withEntries { entries in
            entries.compactMap { id, entry in
                entry.mayBeLookedAt(now: now) && matches(entry) ? id : nil
            }
        }
    }

    /// Reads the states of `ids` again: gone (or expired: `expiry` after their last activity,
    /// or past their maximum lifetime), stored or joined, or in progress with their saved
    /// offset and activity. One that cannot be read now is marked read all the same (it is
    /// read again a second later at the earliest), keeping what was known.
    private func lookAgain<Info>(at ids: [String], in store: ObjectUploadStore<Info>, expiry: Duration) async {
        for id in ids {
            let now = Date().timeIntervalSince1970
            let state: ObjectUploadState<Info>?
            do {
                state = try await store.load(id)?.0
            } catch {
                census.withEntries { $0[id]?.looked = now }
                continue
            }
            guard let state, !store.isExpired(state, expiry: expiry) else {
                census.record(id, .gone, active: nil, at: now)
                continue
            }
            let ended = state.info.isWhole || state.info.isJoined
            census.record(id, ended ? .complete : .inProgress(bytes: state.offset), active: state.active, at: now)
        }
    }
}
