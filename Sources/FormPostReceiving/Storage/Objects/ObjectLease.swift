#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// A lease on one object-storage key, taken with the store's conditional writes (``ObjectCondition``), so that of the
/// receivers sharing a bucket only one works on a resumable upload at a time: the object
/// `key` holds `{"owner": …, "expires": seconds since 1970}`. Taking it writes the object
/// with `If-None-Match: *` (only if there is none); a lease found released, or expired — its
/// holder died or stalled — is taken over with `If-Match` on the ETag read, so that of two
/// receivers taking over at once one wins. It is renewed with `If-Match` on its own ETag and
/// released by deleting it with `If-Match` — or, on a store that ignores `If-Match` on
/// `DELETE` (``ObjectStore/honoursDeleteConditions``), by writing it `released` with
/// `If-Match`: a receiver whose lease was taken over cannot renew or release the new
/// holder's. A conditional write whose answer was lost and that was sent
/// again is refused (412) although it was done: the lease is then read back, and is this
/// holder's when it names this holder's random `owner`. Clocks of the receivers must agree
/// to well within the duration (NTP does).
///
/// A lease taken over from a holder whose lease ran out unreleased says so
/// (``tookOver``): that holder may still be at work, unaware, and its writes have to be
/// fenced off before the new holder's begin (``ObjectUploadStore/holdingLease(_:_:)``).
struct ObjectLease: Sendable {
    /// The lease object's key.
    let key: String
    /// This holder's random name, written in the lease.
    let owner: String
    /// The ETag of the lease object this holder wrote.
    let etag: String
    /// When it runs out, in seconds since 1970.
    let expires: Double
    /// Whether it was taken from a holder whose lease ran out without being released.
    var tookOver = false

    /// What the lease object holds.
    private struct Body: Codable {
        var owner: String
        var expires: Double
        /// Set by a release that wrote the lease instead of deleting it.
        var released: Bool?
    }

    /// Takes the lease `key` for `duration` seconds, or nil when another holder's has not
    /// run out.
    ///
    /// - Throws: ``ObjectStorageError`` when the store fails or refuses otherwise.
    static func take(_ key: String, for duration: Double, with store: any ObjectStore) async throws -> ObjectLease? {
        let owner = UploadStore.randomName()
        do {
            return try await write(key, owner: owner, for: duration, condition: .absent, with: store)
        } catch let error as ObjectStorageError where error.isConditionFailure {
            // Held (by another holder, or by this one if a write whose answer was lost was
            // sent again): taken over only once run out, and only as read.
            guard let (held, etag) = try await read(key, with: store) else { return nil }
            if held.owner == owner { return ObjectLease(key: key, owner: owner, etag: etag, expires: held.expires) }
            let released = held.released == true
            guard released || held.expires < Date().timeIntervalSince1970 else { return nil }
            do {
                var taken = try await write(key, owner: owner, for: duration, condition: .matching(etag: etag), with: store)
                taken.tookOver = !released
                return taken
            } catch let error as ObjectStorageError where error.isConditionFailure || error.status == 404 {
                guard let (again, etag) = try await read(key, with: store), again.owner == owner else { return nil }
                return ObjectLease(key: key, owner: owner, etag: etag, expires: again.expires, tookOver: !released)
            }
        }
    }

    /// The lease renewed for `duration` seconds from now, or nil when it is no longer this
    /// holder's (taken over after it ran out).
    func renewed(for duration: Double, with store: any ObjectStore) async throws -> ObjectLease? {
        do {
            return try await Self.write(key, owner: owner, for: duration, condition: .matching(etag: etag), with: store)
        } catch let error as ObjectStorageError where error.isConditionFailure || error.status == 404 {
            // Renewed by a write whose answer was lost, or taken over.
            guard let (held, etag) = try await Self.read(key, with: store), held.owner == owner else { return nil }
            return ObjectLease(key: key, owner: owner, etag: etag, expires: held.expires)
        }
    }

    /// Releases the lease if it is still this holder's: deleted with `If-Match`, or, where the
    /// store ignores that condition on `DELETE`, written released with it. A failure only
    /// leaves it to run out.
    func release(with store: any ObjectStore) async {
        guard !store.honoursDeleteConditions else {
            return await store.delete(key, condition: .matching(etag: etag), what: "releasing the lease \(key)", attempts: 2)
        }
        guard let body = try? JSONEncoder().encode(Body(owner: owner, expires: 0, released: true)) else { return }
        await Task {
            _ = try? await store.put(key, body: ByteBuffer(bytes: body), attributes: ObjectAttributes(), condition: .matching(etag: etag),
                                     what: "releasing the lease \(key)", attempts: 2)
        }.value
    }

    /// The lease object `key` and its ETag, or nil when there is none.
    private static func read(_ key: String, with store: any ObjectStore) async throws -> (Body, String)? {
        let answer: ObjectAnswer
        do {
            answer = try await store.get(key, maxBytes: 4096, what: "reading the lease \(key)")
        } catch let error as ObjectStorageError where error.status == 404 {
            return nil
        }
        guard let etag = answer.etag else { return nil }
        let body = (try? JSONDecoder().decode(Body.self, from: Data(answer.bytes.readableBytesView))) ?? Body(owner: "", expires: 0)
        return (body, etag)
    }

    private static func write(_ key: String, owner: String, for duration: Double, condition: ObjectCondition, with store: any ObjectStore) async throws -> ObjectLease {
        let expires = Date().timeIntervalSince1970 + duration
        let body = try JSONEncoder().encode(Body(owner: owner, expires: expires))
        let answer = try await store.put(key, body: ByteBuffer(bytes: body), attributes: ObjectAttributes(), condition: condition, what: "taking the lease \(key)",
                                         attempts: 2)
        guard let etag = answer.etag else {
            throw ObjectStorageError.refused(what: "taking the lease \(key)", status: answer.status, code: nil, message: "no ETag in the answer")
        }
        return ObjectLease(key: key, owner: owner, etag: etag, expires: expires)
    }
}
