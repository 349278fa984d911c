import Foundation
@testable import FormPostReceiving
import FormPostS3
import Testing

/// Leases on resumable uploads in object storage that fence: a receiver whose lease ran out
/// and was taken over (it stalled, it is still at work) can no longer save the upload's
/// state, remove the upload or release the new holder's lease. Each scenario runs on a real
/// store: moto here, Ceph's RADOS Gateway in `CephGatewayTests`.
@Suite("Object storage: leases that fence", .timeLimit(.minutes(3)))
struct ObjectLeaseFencingTests {
    /// How long the scenarios' leases last, in seconds: short, for them to run out.
    static let leaseSeconds = 3.0

    /// The uploads of `storage` as tus keeps them, with leases of ``leaseSeconds``.
    static func uploads(_ storage: ObjectStorage) -> ObjectUploadStore<TusUploadInfo> {
        ObjectUploadStore(store: storage, name: "tus", partSize: 8 << 20, leaseSeconds: leaseSeconds, events: nil)
    }

    /// Waits until a lease taken now has run out.
    static func outliveLease() async throws {
        try await Task.sleep(for: .milliseconds(Int64(leaseSeconds * 1000) + 400))
    }

    /// A lease taken over after it ran out says so; the old holder's release leaves the new
    /// holder's lease in place (no third receiver can take it, the new holder renews it); the
    /// new holder's own release lets the next take it without a takeover.
    static func staleReleaseLeavesTheNewHolders(_ storage: ObjectStorage) async throws {
        let uploads = uploads(storage)
        let id = UploadStore.randomName()
        let old = try #require(try await uploads.lease(id))
        #expect(!old.tookOver, "a lease taken where there was none is no takeover")
        try await outliveLease()
        let new = try #require(try await uploads.lease(id), "the lease that ran out was not taken over")
        #expect(new.tookOver)
        await old.release(with: storage)
        let third = try await uploads.lease(id)
        #expect(third == nil, "the old holder's release removed the new holder's lease: a third receiver took it")
        let renewed = try #require(try await new.renewed(for: leaseSeconds, with: storage), "the new holder lost its lease to the old holder's release")
        await renewed.release(with: storage)
        let next = try #require(try await uploads.lease(id), "a released lease could not be taken")
        #expect(!next.tookOver, "a lease released by its holder was taken as one that ran out")
        await next.release(with: storage)
    }

    /// A holder whose lease ran out and was taken over, and that saves the state it read
    /// before (nothing saved since), is refused: the new holder fenced it off by saving the
    /// state first, its activity unchanged. Its checks fail, and it removes nothing.
    static func staleHolderIsFencedOff(_ storage: ObjectStorage) async throws {
        let uploads = uploads(storage)
        let id = UploadStore.randomName()
        try await uploads.start(id, info: TusUploadInfo(length: 100, metadata: nil, created: Date().timeIntervalSince1970, client: "127.0.0.1"))
        let stale = HeldLease(try #require(try await uploads.lease(id)), duration: leaseSeconds)
        let (read, etag) = try #require(try await uploads.load(id))
        try await outliveLease()
        // The new holder takes the upload over and does nothing with it.
        try await uploads.holdingLease(id) { _ in }
        var appended = read
        appended.tail = .init(key: uploads.statePrefix + id + ".tail-stale", size: 5)
        await #expect(throws: UploadStorageFailure.changed, "the stale holder's save was taken") {
            _ = try await uploads.save(appended, id: id, replacing: etag)
        }
        let (now, _) = try #require(try await uploads.load(id))
        #expect(now.tail == nil && now.fence != nil, "the state: \(now)")
        #expect(now.active == read.active, "fencing the upload made it active again: \(String(describing: read.active)) → \(String(describing: now.active))")
        #expect(throws: UploadStorageFailure.leaseLost) { try stale.check() }
        await #expect(throws: UploadStorageFailure.leaseLost) {
            try await uploads.remove(id, state: now, storedObject: false, holding: stale)
        }
        #expect(try await uploads.load(id) != nil, "the stale holder removed the upload")
    }

    /// Storage on `moto`, probed as `formpost serve` probes it.
    static func storage(on moto: MotoStore) async throws -> ObjectStorage {
        var storage = moto.storage(prefix: "fencing")
        try await storage.checkConditionalWrites()
        return storage
    }

    @Test("moto refuses DELETE with a stale If-Match, as S3 does: the probe finds it, compares quoted ETags, and finds moto's dates of multipart uploads wrong")
    func motoProbe() async throws {
        let moto = try await MotoStore()
        let storage = try await Self.storage(on: moto)
        #expect(storage.honoursDeleteConditions && !storage.unquotedETagConditions, "\(storage.conditionsReport)")
        #expect(!storage.datesMultipartUploads, "moto dates every multipart upload in 2010: \(storage.conditionsReport)")
        #expect(storage.listsMultipartUploadsByPrefix, "moto lists multipart uploads by prefix: \(storage.conditionsReport)")
        withExtendedLifetime(moto) {}
    }

    @Test("on moto, a released lease stays the new holder's: released by DELETE with If-Match, and by a conditional write as on a store that ignores it",
          arguments: [true, false])
    func staleRelease(deleting: Bool) async throws {
        let moto = try await MotoStore()
        var storage = try await Self.storage(on: moto)
        storage.honoursDeleteConditions = deleting
        try await Self.staleReleaseLeavesTheNewHolders(storage)
        withExtendedLifetime(moto) {}
    }

    @Test("on moto, a holder whose lease was taken over can no longer save the state or remove the upload")
    func fencedOff() async throws {
        let moto = try await MotoStore()
        try await Self.staleHolderIsFencedOff(try await Self.storage(on: moto))
        withExtendedLifetime(moto) {}
    }
}
