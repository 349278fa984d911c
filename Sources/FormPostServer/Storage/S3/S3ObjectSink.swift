import FormPostDigests
import Multipart
import NIOCore

/// Streams one uploaded file into an object, hashing it as it goes: bytes gather into a
/// part of ``ObjectStorage/partSize(maxFileSize:)``; a file that ends before its first
/// part is full goes as one `PUT` (its SHA-256 in `x-amz-meta-sha256`); a larger one
/// becomes a multipart upload, each part sent while the next gathers — at most two parts
/// held, so a store slower than the client slows the client — and its SHA-256, known only
/// once complete, set as the object's tag `sha256`. A sink discarded, or one whose upload
/// failed, aborts its multipart upload: no part is left behind.
struct S3ObjectSink: FormFileSink {
    let storedName: String
    private let client: S3Client
    /// The object's `Content-Type`, as a field of the request that makes it, or none.
    private let contentTypeFields: [SignatureV4.Field]
    private var hasher = SHA256Hasher()
    private var pipeline: S3PartPipeline
    /// Whether its multipart upload ended (completed or aborted): nothing more to abort.
    private var ended = false
    private(set) var size: Int64 = 0

    init(client: S3Client, key: String, partSize: Int, contentType: String?) {
        self.client = client
        self.storedName = key
        let fields: [SignatureV4.Field] = contentType.map { [("content-type", $0)] } ?? []
        contentTypeFields = fields
        pipeline = S3PartPipeline(client: client, key: key, partSize: partSize, gathered: ByteBufferAllocator().buffer(capacity: 0)) {
            try await client.beginMultipartUpload(of: key, fields: fields)
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
            _ = try await client.send(.PUT, key: storedName, fields: contentTypeFields + [("x-amz-meta-sha256", digest)], body: pipeline.gathering, what: "storing \(storedName)")
            return digest
        }
        do {
            if pipeline.gathering.readableBytes > 0 { try await pipeline.sendGathered() }
            try await pipeline.settle()
            try await client.completeMultipartUpload(of: storedName, uploadID: uploadID, parts: pipeline.parts)
        } catch {
            await discard()
            throw error
        }
        ended = true
        do {
            try await client.tagSHA256(of: storedName, digest)
        } catch {
            await client.sendDetached(.DELETE, key: storedName, what: "removing \(storedName)")
            throw error
        }
        return digest
    }

    mutating func discard() async {
        await pipeline.cancel()
        guard !ended, let uploadID = pipeline.uploadID else { return }
        ended = true
        await client.abortMultipartUpload(of: storedName, uploadID: uploadID)
    }
}
