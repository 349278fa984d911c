#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Looks after the uploads of an ``ObjectUploadStore`` that no request comes for, every
/// `ObjectStorage/sweepInterval`: a completion recorded and not finished (its receiver
/// died, or the store failed it, and its client did not ask again) is finished — the object
/// made, its `post-finish` event recorded — and an upload idle for the receiver's expiry is
/// removed (its stored object stays). Each under the upload's lease: one that another
/// request holds is left for the next pass. Then what dead receivers left is removed: tails,
/// leases and partial uploads' objects that no upload names, and multipart uploads older
/// than any upload may live (``ObjectUploadStore/orphans(in:)``,
/// ``ObjectUploadStore/strandedMultipartUploads()``). It finds them by one listing of the state
/// prefix per pass (a `GET` of 1,000 keys), reading only the uploads it acts on. Every
/// receiver on the bucket sweeps; the leases keep them from acting on one upload at once.
/// It stops when its owner (the receiver) is gone.
final class ObjectUploadSweep<Info: ResumableUploadInfo>: Sendable {
    let store: ObjectUploadStore<Info>
    let expiry: Duration
    let basePath: String
    let logger: Logger

    init(store: ObjectUploadStore<Info>, expiry: Duration, basePath: String, logger: Logger) {
        (self.store, self.expiry, self.basePath, self.logger) = (store, expiry, basePath, logger)
        let interval = store.store.sweepInterval
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let sweep = self else { return }
                await sweep.pass()
            }
        }
    }

    /// One pass over the uploads in the store.
    func pass() async {
        let listed: [ListedObject]
        do {
            listed = try await store.store.list(prefix: store.statePrefix)
        } catch {
            logger.warning("sweeping the uploads in the bucket: listing them failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
            return
        }
        let found = store.uploadsToSweep(in: listed, expiry: expiry)
        for (id, marked) in found.completing {
            do {
                try await store.holdingLease(id) { held in
                    let mark = store.completingKey(id)
                    guard let (state, etag) = try await store.load(id) else { return await store.removeObject(mark) }
                    if state.info.completing != nil, !state.info.isStored {
                        // Finished, and the mark removed.
                        _ = try await store.finish(id, state: state, etag: etag, holding: held, basePath: basePath, logger: logger)
                    } else if state.info.isStored || Date().timeIntervalSince(marked ?? .distantFuture) > 2 * store.leaseSeconds {
                        // Finished before, or marked (long enough ago that its request is over) by a
                        // receiver that died before it recorded the completion.
                        await store.removeObject(mark)
                    }
                }
            } catch UploadStorageFailure.held {
                continue
            } catch {
                logger.error("upload \(RequestLogLine.shortID(id)): finishing its completion failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
            }
        }
        for id in found.idle {
            do {
                _ = try await store.current(id, expiry: expiry)
            } catch UploadStorageFailure.expired {
                logger.info("upload \(RequestLogLine.shortID(id)) expired: removed by the sweep")
            } catch {
                continue
            }
        }
        await removeStranded(listed)
    }

    /// Removes what dead receivers left that no upload names (``ObjectUploadStore/orphans(in:)``)
    /// and aborts the multipart uploads older than any upload may live
    /// (``ObjectUploadStore/strandedMultipartUploads()``); a failure waits for the next pass.
    private func removeStranded(_ listed: [ListedObject]) async {
        do {
            let orphans = try await store.orphans(in: listed)
            for key in orphans { await store.removeObject(key) }
            let stranded = try await store.strandedMultipartUploads()
            for upload in stranded { await store.abort(upload.uploadID, key: upload.key) }
            if !orphans.isEmpty || !stranded.isEmpty {
                logger.notice("sweep: removed \(orphans.count) objects no upload names and \(stranded.count) multipart uploads older than any upload may live")
            }
        } catch {
            logger.warning("sweeping the bucket for what dead receivers left failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
        }
    }
}
