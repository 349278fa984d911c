import FormPostDigests
import Multipart
import NIOCore

/// Streams one uploaded file into an object, hashing it as it goes: bytes gather into a
/// part of ``ObjectStore/partSize(maxFileSize:)``; a file that ends before its first
/// part is full goes as one `PUT` (its SHA-256 in `x-amz-meta-sha256`); a larger one
/// becomes a multipart upload, each part sent while the next gathers — two in flight at
/// most, three parts held, so a store slower than the client slows the client — and its
/// SHA-256, known only once complete, set as the object's tag `sha256`. A sink discarded, or one whose upload
/// failed, aborts its multipart upload: no part is left behind. Its buffers are taken from
/// `memory` (``PartMemoryBudget``), when given.
struct ObjectFileSink: FormFileSink {
    let storedName: String
    private let store: any ObjectStore
    /// The object's `Content-Type`, or nil.
    private let contentType: String?
    private var hasher = SHA256Hasher()
    private var pipeline: ObjectPartPipeline
    /// Whether its multipart upload ended (completed or aborted): nothing more to abort.
    private var ended = false
    private(set) var size: Int64 = 0

    init(store: any ObjectStore, key: String, partSize: Int, contentType: String?, memory: PartMemoryBudget?) {
        self.store = store
        self.storedName = key
        self.contentType = contentType
        let checksummed = store.checksumsParts
        pipeline = ObjectPartPipeline(store: store, key: key, partSize: partSize, hold: memory.map(PartMemoryHold.init), checksummed: checksummed) {
            try await store.beginMultipartUpload(of: key, attributes: ObjectAttributes(contentType: contentType, partChecksums: checksummed))
        }
    }

    mutating func write(_ bytes: ByteBuffer) async throws {
        bytes.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        size += Int64(bytes.readableBytes)
        try await pipeline.write(bytes)
    }

    mutating func complete() async throws -> String {
        let digest = Hexadecimal.string(hasher.finalize())
        guard let uploadID = pipeline.uploadID else {
            _ = try await store.put(storedName, body: pipeline.gathering, attributes: ObjectAttributes(contentType: contentType, sha256: digest),
                                   what: "storing \(storedName)")
            return digest
        }
        do {
            if pipeline.gathering.readableBytes > 0 { try await pipeline.sendGathered() }
            try await pipeline.settle()
            try await store.completeMultipartUpload(of: storedName, uploadID: uploadID, parts: pipeline.parts)
        } catch {
            await discard()
            throw error
        }
        ended = true
        do {
            try await store.tagSHA256(of: storedName, digest)
        } catch {
            await store.delete(storedName, what: "removing \(storedName)")
            throw error
        }
        return digest
    }

    mutating func discard() async {
        await pipeline.cancel()
        guard !ended, let uploadID = pipeline.uploadID else { return }
        ended = true
        await store.abortMultipartUpload(of: storedName, uploadID: uploadID, attempts: nil)
    }
}
