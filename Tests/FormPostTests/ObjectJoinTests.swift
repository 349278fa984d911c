import Foundation
@testable import FormPostReceiving
import NIOCore
import Testing

/// Joining objects into a multipart upload (tus's concatenation on object storage), on
/// moto: what the store copies itself and what passes through the receiver, and the object
/// made, read back with boto3.
@Suite("Objects joined by the store", .timeLimit(.minutes(5)))
struct ObjectJoinTests {
    /// Objects of `sizes` (random bytes) joined into one, through `RecordingObjectStore`: what
    /// it recorded, the parts' sizes, and whether the object made is the objects in order.
    static func join(_ sizes: [Int]) async throws -> (record: RecordingObjectStore.Record, parts: [Int64], intact: Bool) {
        let moto = try await MotoStore()
        let store = RecordingObjectStore(moto.storage(prefix: "p/"))
        let uploads = ObjectUploadStore<TusUploadInfo>(store: store, name: "tus", partSize: 8 << 20, leaseSeconds: 60, events: nil)
        var whole = Data()
        var objects: [ObjectUploadStore<TusUploadInfo>.JoinedObject] = []
        for (index, size) in sizes.enumerated() {
            let bytes = try TusCreationExtensionTests.randomBytes(size)
            whole += bytes
            _ = try await store.put("p/piece\(index)", body: ByteBuffer(bytes: bytes), what: "a piece")
            objects.append(.init(key: "p/piece\(index)", size: Int64(size)))
        }
        let uploadID = try await store.beginMultipartUpload(of: "p/joined", attributes: ObjectAttributes())
        let parts = try await uploads.join(objects, into: "p/joined", uploadID: uploadID, partSize: 8 << 20)
        try await store.completeMultipartUpload(of: "p/joined", uploadID: uploadID, parts: parts)
        let joined = try await moto.contents().objects.first { $0.key == "p/joined" }
        return (store.record, parts.map(\.size), joined?.sha256 == sha256Hex(whole) && joined?.size == whole.count)
    }

    @Test("objects of 5 MiB and more are copied by the store, each a part: no byte passes through the receiver")
    func copiedWhole() async throws {
        let (record, parts, intact) = try await Self.join([6 << 20, 5 << 20, 9 << 20, 1000])
        #expect(intact, "the object made is not the objects in order")
        #expect(record.read.isEmpty && record.sentPartSizes.isEmpty, "\(record)")
        #expect(record.copied == [0..<(6 << 20), 0..<(5 << 20), 0..<(9 << 20), 0..<1000] && parts.count == 4)
    }

    @Test("objects under 5 MiB are read and gathered with the start of the next into a part of the part size; a large object's rest under 5 MiB goes with the next; every part but the last is 5 MiB or more")
    func gathered() async throws {
        let sizes = [12 << 20, 1, 3 << 20, 9 << 20, 700_000]
        let (record, parts, intact) = try await Self.join(sizes)
        #expect(intact, "the object made is not the objects in order")
        #expect(record.copied == [0..<(12 << 20)], "\(record.copied)")
        let gatheredFromFourth = Int64(8 << 20) - 1 - (3 << 20)
        #expect(record.read == [0..<1, 0..<(3 << 20), 0..<gatheredFromFourth, gatheredFromFourth..<(9 << 20), 0..<700_000], "\(record.read)")
        #expect(record.sentPartSizes == [8 << 20, (9 << 20) - Int(gatheredFromFourth) + 700_000], "\(record.sentPartSizes)")
        #expect(parts.dropLast().allSatisfy { $0 >= 5 << 20 } && parts.reduce(0, +) == Int64(sizes.reduce(0, +)), "\(parts)")
    }
}
