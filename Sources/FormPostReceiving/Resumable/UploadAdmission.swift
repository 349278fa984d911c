#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOCore

/// Whether a receiver of resumable uploads takes one more: at most ``maxInProgress``
/// incomplete uploads at once, at most ``maxInProgressPerClient`` of them created from
/// one client address, and no more once that address's uploads in progress hold
/// ``maxBytesInProgressPerClient`` bytes — so that a client that creates uploads without
/// end, or fills the disk, is refused (503) while others still create theirs. The states of complete uploads are kept until
/// they expire (for a client whose last answer was lost), at most ``maxCompleteKept`` of
/// them: past that, a creation removes the state of the oldest one of the address that
/// has the most (their stored files stay). Expired uploads count for nothing.
struct UploadAdmission: Sendable {
    /// The most incomplete uploads at once.
    let maxInProgress: Int
    /// The most incomplete uploads at once from one client address.
    let maxInProgressPerClient: Int
    /// The bytes the incomplete uploads of one client address may hold (as their files
    /// said when last looked at) before its creations are refused.
    let maxBytesInProgressPerClient: Int64
    /// The most complete uploads whose state is kept.
    let maxCompleteKept: Int

    /// A creation refused: why, for the client.
    struct Refusal: Error {
        let message: String
    }

    /// What ``decide(client:entries:now:hasExpired:)`` says of a creation.
    enum Decision: Equatable {
        /// Taken; the uploads in `removing` are to be removed first (expired ones, and the
        /// complete ones past ``maxCompleteKept``).
        case admitted(removing: [String])
        /// Refused for `message`, unless looking at the files of the uploads in `recheck`
        /// shows that some ended (complete, gone, or idle) and so make room.
        case full(message: String, recheck: [String])
    }

    init(configuration: ReceiverConfiguration) {
        maxInProgress = configuration.maxUploadsInProgress
        maxInProgressPerClient = configuration.maxUploadsInProgressPerClient
        maxBytesInProgressPerClient = configuration.maxBytesInProgressPerClient
        maxCompleteKept = configuration.maxUploadsInProgress
    }

    /// Whether `client` may create an upload, given those kept (`entries`) at `now`
    /// (seconds since 1970); `hasExpired` says whether an upload last active at a time
    /// (``UploadCensus/Entry/active``) has expired.
    func decide(client: String?, entries: [String: UploadCensus.Entry], now: Double, hasExpired: (Double) -> Bool) -> Decision {
        var expired: [String] = []
        var inProgress: [String] = []
        var ofClient: [String] = []
        var complete: [(id: String, entry: UploadCensus.Entry)] = []
        var bytesOfClient: Int64 = 0
        for (id, entry) in entries {
            if hasExpired(entry.active) {
                if !entry.creating { expired.append(id) }
            } else if entry.complete {
                complete.append((id, entry))
            } else {
                inProgress.append(id)
                if let client, entry.client == client {
                    ofClient.append(id)
                    bytesOfClient += entry.received
                }
            }
        }
        /// The uploads of `ids` whose files say more than the census may know.
        func stale(_ ids: [String]) -> [String] {
            ids.filter { entries[$0]?.mayBeLookedAt(now: now) ?? false }
        }
        if inProgress.count >= maxInProgress {
            return .full(message: "\(maxInProgress) uploads are in progress: try again later", recheck: stale(inProgress))
        }
        if ofClient.count >= maxInProgressPerClient {
            return .full(message: "\(maxInProgressPerClient) uploads from your address are in progress: complete or delete some, or try again later",
                         recheck: stale(ofClient))
        }
        if bytesOfClient >= maxBytesInProgressPerClient {
            return .full(message: "the uploads in progress from your address hold \(bytesOfClient) bytes, the most one address may: complete or delete some, or try again later",
                         recheck: stale(ofClient))
        }
        return .admitted(removing: expired + Self.oldestOfMost(complete, beyond: maxCompleteKept - 1))
    }

    /// The complete uploads to forget so that `keep` remain: each time the oldest of the
    /// client address that has the most.
    private static func oldestOfMost(_ complete: [(id: String, entry: UploadCensus.Entry)], beyond keep: Int) -> [String] {
        var excess = complete.count - max(keep, 0)
        guard excess > 0 else { return [] }
        var byClient = Dictionary(grouping: complete) { $0.entry.client ?? "" }.mapValues { $0.sorted { $0.entry.created > $1.entry.created } }
        var removed: [String] = []
        while excess > 0, let most = byClient.max(by: { $0.value.count < $1.value.count })?.key, let oldest = byClient[most]?.popLast() {
            removed.append(oldest.id)
            excess -= 1
        }
        return removed
    }

    /// Creates the upload `info` (created at `created`) for `client` if the rule admits it,
    /// after removing what ``decide(client:entries:now:hasExpired:)`` says to; when full,
    /// looks at the files of the uploads it names first, removing those that turn out idle
    /// (``UploadExpiry``). Returns the new upload's id, held in `locks` for the creating
    /// request on `connection` (the token gives it back): from the moment its files exist it is
    /// the creating request's, so no sweep removes it before that request appends its first
    /// bytes, however long the machine takes to get there. It blocks on the file system: call
    /// it on NIO's thread pool.
    ///
    /// - Throws: ``Refusal`` when the uploads in progress reached a limit; a failure to
    ///   create the upload's files.
    func admit(_ info: some Encodable, created: Double, client: String?, connection: (any ReceiverConnection)?, store: UploadStore, expiry: UploadExpiry,
               locks: UploadLocks, digests: RunningDigests, logger: Logger) throws -> (id: String, token: UInt64) {
        // The bytes the client's uploads hold now, not as the last sweep saw them (at most
        // one look a second at each).
        let now = Date().timeIntervalSince1970
        let unlooked = store.census.withEntries { entries in
            entries.compactMap { id, entry in
                entry.client == client && client != nil && !entry.complete && entry.mayBeLookedAt(now: now) ? id : nil
            }
        }
        if !unlooked.isEmpty { expiry.lookAgain(at: unlooked, in: store, locks: locks, digests: digests, logger: logger) }
        var (decision, id) = reserve(created: created, client: client, census: store.census, hasExpired: expiry.hasExpired(active:))
        if case .full(_, let recheck) = decision, !recheck.isEmpty {
            expiry.lookAgain(at: recheck, in: store, locks: locks, digests: digests, logger: logger)
            (decision, id) = reserve(created: created, client: client, census: store.census, hasExpired: expiry.hasExpired(active:))
        }
        switch decision {
        case .full(let message, _):
            throw Refusal(message: message)
        case .admitted(let removing):
            for victim in removing { expiry.removeEnded(victim, from: store, locks: locks, digests: digests, logger: logger, evictingComplete: true) }
            // A new random id: nothing else holds it.
            guard let token = locks.acquire(id, connection: connection) else {
                store.census.remove(id)
                throw Refusal(message: "the new upload's name was taken: try again")
            }
            do {
                try store.create(info, id: id)
            } catch {
                locks.release(id, token: token)
                store.census.remove(id)
                throw error
            }
            return (id, token)
        }
    }

    /// Decides on a creation and, when admitted, enters it in `census` under a new id as
    /// being created — at once, so that two creations at the same time are both counted.
    /// `hasExpired` says whether an upload last active at a time has expired.
    func reserve(created: Double, client: String?, census: UploadCensus, hasExpired: (Double) -> Bool) -> (Decision, String) {
        let id = UploadStore.randomName()
        let now = Date().timeIntervalSince1970
        let decision = census.withEntries { entries in
            let decision = decide(client: client, entries: entries, now: now, hasExpired: hasExpired)
            if case .admitted = decision { entries[id] = UploadCensus.Entry(client: client, created: created, creating: true) }
            return decision
        }
        return (decision, id)
    }

    /// The least time, in seconds, between two looks at one upload's files when a creation
    /// is refused: a flood of refused creations looks at each upload at most once a second.
    static let lookInterval: Double = 1
}
