#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Completions in the directory taken up again: those a stopped server or a failed
/// completion left, at start and in each sweep (``CompletionRetries``).
extension DirectoryUploads {
    /// Notes for a completion the uploads whose every byte is there but that are not
    /// stored — a completion recorded, or data at the full length and no unverified append:
    /// a server stopped, or a completion failed, before it stored them. It reads the state
    /// of each upload in progress: at start.
    func findFullUploads() {
        for (id, entry) in store.census.all where !entry.complete && !entry.creating {
            guard let info = store.load(id, as: Info.self), !info.isStored else { continue }
            if info.completing != nil || (info.verified == nil && store.dataSize(id).map(info.completes) == true) { retries.add(id) }
        }
    }

    /// Tries again the completions of ``retries`` that no request holds now (one that does
    /// completes it itself), with the expiry `lifetime`. It blocks on the file system: at
    /// start, and in each sweep.
    func completeFull(lifetime: UploadExpiry) {
        for id in retries.all {
            guard let token = locks.acquire(id, background: true) else { continue }
            defer { locks.release(id, token: token) }
            do {
                if let done = try completeAgain(id, lifetime: lifetime) {
                    logger.info("upload \(RequestLogLine.shortID(id)) complete, its completion taken up again: \(storedName(of: done)) \(done.knownLength ?? 0) bytes")
                    ReceiverMetrics.upload(Info.uploadProtocol, .completed)
                }
                retries.remove(id)
            } catch {
                logger.error("upload \(RequestLogLine.shortID(id)): completing it again failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
            }
        }
    }

    /// Stores the upload `id` if every byte of it is there and it is not stored yet (nor
    /// expired); returns it stored, or nil when there was nothing to store. It blocks on
    /// the file system; call it under the upload's lock.
    func completeAgain(_ id: String, lifetime: UploadExpiry) throws -> Info? {
        guard let info = store.load(id, as: Info.self), !info.isStored, info.verified == nil,
              !lifetime.hasExpired(id, created: info.created, in: store), store.dataSize(id).map(info.completes) == true else { return nil }
        return try Self.complete(id, info: info, sha256: nil, in: store, basePath: basePath)
    }
}
