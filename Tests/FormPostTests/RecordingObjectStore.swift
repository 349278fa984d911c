import FormPostReceiving
import NIOCore
import Synchronization

/// A real object store (moto's, RGW's) with a record of the bytes that went through the
/// receiver for a join: each range the store copied itself (`copyPart`), each range read
/// (`bytes(of:range:what:)`), each part sent. Every operation is the wrapped store's.
final class RecordingObjectStore: ObjectStore {
    /// What a join asked of the store.
    struct Record: Equatable {
        var copied: [Range<Int64>] = []
        var read: [Range<Int64>] = []
        var sentPartSizes: [Int] = []
        /// Where each part's bytes were in memory, by part number: a buffer used again for a
        /// later part shows as the same address.
        var partAddresses: [Int: UInt] = [:]
        /// The most parts in flight at once.
        var mostPartsInFlight = 0
        /// The parts in flight now.
        var partsInFlight = 0
    }

    let wrapped: any ObjectStore
    private let recorded = Mutex(Record())

    /// How long each part is held before it is sent on, so that parts in flight overlap.
    let partDelay: Duration

    init(_ wrapped: any ObjectStore, partDelay: Duration = .zero) {
        self.wrapped = wrapped
        self.partDelay = partDelay
    }

    /// What was asked so far.
    var record: Record { recorded.withLock { $0 } }

    var bucket: String { wrapped.bucket }
    var prefix: String { wrapped.prefix }
    var leaseDuration: Duration { wrapped.leaseDuration }
    var sweepInterval: Duration { wrapped.sweepInterval }
    var honoursDeleteConditions: Bool { wrapped.honoursDeleteConditions }
    var checksumsParts: Bool { wrapped.checksumsParts }
    func listMultipartUploads(prefix: String) async throws -> [ListedMultipartUpload] { try await wrapped.listMultipartUploads(prefix: prefix) }
    func partSize(maxFileSize: Int64) -> Int { wrapped.partSize(maxFileSize: maxFileSize) }
    func problem() async -> String? { await wrapped.problem() }

    func put(_ key: String, body: ByteBuffer, attributes: ObjectAttributes, condition: ObjectCondition, what: String,
             attempts: Int?) async throws -> ObjectAnswer {
        try await wrapped.put(key, body: body, attributes: attributes, condition: condition, what: what, attempts: attempts)
    }

    func get(_ key: String, maxBytes: Int, what: String) async throws -> ObjectAnswer {
        try await wrapped.get(key, maxBytes: maxBytes, what: what)
    }

    func bytes(of key: String, range: Range<Int64>, what: String) async throws -> ByteBuffer {
        recorded.withLock { $0.read.append(range) }
        return try await wrapped.bytes(of: key, range: range, what: what)
    }

    func size(of key: String, what: String) async throws -> Int64? { try await wrapped.size(of: key, what: what) }

    func read(_ key: String, what: String, each: (ByteBuffer) throws -> Void) async throws {
        try await wrapped.read(key, what: what, each: each)
    }

    func delete(_ key: String, condition: ObjectCondition, what: String, attempts: Int?) async {
        await wrapped.delete(key, condition: condition, what: what, attempts: attempts)
    }

    func list(prefix: String) async throws -> [ListedObject] { try await wrapped.list(prefix: prefix) }
    func listTopLevel(prefix: String) async throws -> [ListedObject] { try await wrapped.listTopLevel(prefix: prefix) }

    func beginMultipartUpload(of key: String, attributes: ObjectAttributes) async throws -> String {
        try await wrapped.beginMultipartUpload(of: key, attributes: attributes)
    }

    func sendPart(_ bytes: ByteBuffer, number: Int, of key: String, uploadID: String, checksummed: Bool, timeout: Duration) async throws -> ObjectPart {
        recorded.withLock { record in
            record.sentPartSizes.append(bytes.readableBytes)
            record.partAddresses[number] = bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
            record.partsInFlight += 1
            record.mostPartsInFlight = max(record.mostPartsInFlight, record.partsInFlight)
        }
        defer { recorded.withLock { $0.partsInFlight -= 1 } }
        if partDelay > .zero { try await Task.sleep(for: partDelay) }
        return try await wrapped.sendPart(bytes, number: number, of: key, uploadID: uploadID, checksummed: checksummed, timeout: timeout)
    }

    func copyPart(from source: String, range: Range<Int64>, number: Int, of key: String, uploadID: String) async throws -> ObjectPart {
        recorded.withLock { $0.copied.append(range) }
        return try await wrapped.copyPart(from: source, range: range, number: number, of: key, uploadID: uploadID)
    }

    func completeMultipartUpload(of key: String, uploadID: String, parts: [ObjectPart]) async throws {
        try await wrapped.completeMultipartUpload(of: key, uploadID: uploadID, parts: parts)
    }

    func abortMultipartUpload(of key: String, uploadID: String, attempts: Int?) async {
        await wrapped.abortMultipartUpload(of: key, uploadID: uploadID, attempts: attempts)
    }

    func tagSHA256(of key: String, _ sha256: String) async throws { try await wrapped.tagSHA256(of: key, sha256) }
}
