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
    private let partSize: Int
    private let contentType: String?
    private var gathering: ByteBuffer
    private var hasher = SHA256Hasher()
    private var uploadID: String?
    private var parts: [(number: Int, etag: String)] = []
    /// The part being sent: its number and ETag once sent, and its buffer back, to gather
    /// the next but one in (a file never allocates more than two parts' buffers, so that no
    /// allocator keeps freed ones of every part).
    private var sending: Task<(part: (number: Int, etag: String), buffer: ByteBuffer), any Error>?
    private(set) var size: Int64 = 0

    init(client: S3Client, key: String, partSize: Int, contentType: String?) {
        self.client = client
        self.storedName = key
        self.partSize = partSize
        self.contentType = contentType
        gathering = ByteBufferAllocator().buffer(capacity: 0)
    }

    mutating func write(_ bytes: ByteBuffer) async throws {
        bytes.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        size += Int64(bytes.readableBytes)
        var bytes = bytes
        while bytes.readableBytes > 0 {
            if gathering.capacity < partSize { gathering.reserveCapacity(partSize) }
            let taken = min(bytes.readableBytes, partSize - gathering.readableBytes)
            var slice = bytes.readSlice(length: taken)!
            gathering.writeBuffer(&slice)
            if gathering.readableBytes == partSize { try await sendGathered() }
        }
    }

    /// Sends the part gathered once the one before has gone (beginning the multipart upload
    /// with the first), and starts gathering the next.
    private mutating func sendGathered() async throws {
        let spare = try await awaitSending()
        if uploadID == nil {
            let answer = try await client.send(.POST, key: storedName, query: [("uploads", "")], fields: objectFields(), what: "beginning a multipart upload")
            guard let id = S3XML.text(of: "UploadId", in: answer.body) else {
                throw ObjectStorageError.refused(what: "beginning a multipart upload", status: answer.status, code: nil, message: "no UploadId in the answer")
            }
            uploadID = id
        }
        let (client, key, id, number, part) = (client, storedName, uploadID!, parts.count + 1, gathering)
        sending = Task {
            let answer = try await client.send(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", id)], body: part,
                                               what: "sending part \(number) of \(key)")
            guard let etag = answer.headers.first(name: "etag") else {
                throw ObjectStorageError.refused(what: "sending part \(number) of \(key)", status: answer.status, code: nil, message: "no ETag in the answer")
            }
            return ((number, etag), part)
        }
        if var spare {
            spare.clear()
            gathering = spare
        } else {
            gathering = ByteBufferAllocator().buffer(capacity: partSize)
        }
    }

    /// Waits for the part being sent, if any; returns its buffer.
    private mutating func awaitSending() async throws -> ByteBuffer? {
        guard let task = sending else { return nil }
        sending = nil
        let (part, buffer) = try await task.value
        parts.append(part)
        return buffer
    }

    /// The fields the object is made with: its content type.
    private func objectFields() -> [SignatureV4.Field] {
        contentType.map { [("content-type", $0)] } ?? []
    }

    mutating func complete() async throws -> String {
        let digest = Hexadecimal.string(hasher.finalize())
        guard uploadID != nil || sending != nil else {
            _ = try await client.send(.PUT, key: storedName, fields: objectFields() + [("x-amz-meta-sha256", digest)], body: gathering,
                                      what: "storing \(storedName)")
            return digest
        }
        do {
            if gathering.readableBytes > 0 { try await sendGathered() }
            _ = try await awaitSending()
            let list = parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\(S3XML.escaped($0.etag))</ETag></Part>" }.joined()
            let answer = try await client.send(.POST, key: storedName, query: [("uploadId", uploadID!)],
                                               body: ByteBuffer(string: "<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>"),
                                               what: "completing the multipart upload of \(storedName)")
            // S3 may answer 200 and then fail the completion in the body.
            if answer.body.contains("<Error>") {
                throw ObjectStorageError.refused(what: "completing the multipart upload of \(storedName)", status: answer.status,
                                                 code: S3XML.text(of: "Code", in: answer.body), message: S3XML.text(of: "Message", in: answer.body))
            }
        } catch {
            await discard()
            throw error
        }
        uploadID = nil
        let tagging = "<Tagging><TagSet><Tag><Key>sha256</Key><Value>\(digest)</Value></Tag></TagSet></Tagging>"
        do {
            _ = try await client.send(.PUT, key: storedName, query: [("tagging", "")], body: ByteBuffer(string: tagging), what: "tagging \(storedName)")
        } catch {
            await S3FileStore.remove(storedName, with: client)
            throw error
        }
        return digest
    }

    mutating func discard() async {
        sending?.cancel()
        _ = try? await sending?.value
        sending = nil
        guard let id = uploadID else { return }
        uploadID = nil
        // In a task of its own: the request's may be cancelled (its client gone), and the
        // abort must still be sent.
        let (client, key) = (client, storedName)
        await Task {
            _ = try? await client.send(.DELETE, key: key, query: [("uploadId", id)], what: "aborting the multipart upload of \(key)")
        }.value
    }
}
