#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What receivers that died left in the bucket, which no upload names and no request will
/// ever remove: found by the sweep (``ObjectUploadSweep``) in its listing of the state
/// prefix, and among the bucket's multipart uploads.
extension ObjectUploadStore {
    /// The objects of `listed` (a listing of the state prefix) that no upload can name any
    /// more, each written more than two leases ago (no request that wrote it is still at
    /// work): the tails, leases and partial uploads' objects of uploads whose state is gone,
    /// and the tails an upload's state does not name (a receiver killed between writing a
    /// tail and saving the state naming it). Reads the state of each upload with such a tail.
    func orphans(in listed: [ListedObject]) async throws -> [String] {
        let before = Date(timeIntervalSinceNow: -2 * leaseSeconds)
        let states = Set(listed.compactMap { object in object.key.hasSuffix(".info") ? String(object.key.dropLast(5)) : nil })
        var orphans: [String] = []
        var tailsOf: [String: [String]] = [:]
        for object in listed where (object.lastModified ?? .distantFuture) < before {
            let name = object.key.dropFirst(statePrefix.count)
            guard let dot = name.firstIndex(of: ".") else { continue }
            let upload = statePrefix + name[..<dot], suffix = name[dot...]
            guard suffix.hasPrefix(".tail-") || suffix == ".lease" || suffix == ".partial" else { continue }
            if !states.contains(upload) {
                orphans.append(object.key)
            } else if suffix.hasPrefix(".tail-") {
                tailsOf[String(name[..<dot]), default: []].append(object.key)
            }
        }
        for (id, tails) in tailsOf {
            guard let (state, _) = try await load(id) else { continue }
            orphans += tails.filter { $0 != state.tail?.key }
        }
        return orphans
    }

    /// The multipart uploads under the store's prefix begun more than ``maxLifetime`` and
    /// two leases ago: no upload that may still receive bytes is that old (none without a
    /// maximum lifetime). A form's file streaming for that long loses its parts too.
    func strandedMultipartUploads() async throws -> [ListedMultipartUpload] {
        guard let maxLifetime else { return [] }
        let before = Date(timeIntervalSinceNow: -(maxLifetime + 2 * leaseSeconds))
        // Only keys under the prefix: a store that ignored the prefix would list other applications' uploads.
        return try await store.listMultipartUploads(prefix: store.prefix).filter { $0.key.hasPrefix(store.prefix) && ($0.initiated ?? .distantFuture) < before }
    }
}
