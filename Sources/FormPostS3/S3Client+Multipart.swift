import FormPostReceiving
import NIOCore
import NIOHTTP1

/// S3's multipart uploads, and the requests whose answer does not matter: what a form's file
/// (``ObjectFileSink``) and a resumable upload (``ObjectUploadStore``) send alike.
extension S3Client {
    /// Begins a multipart upload of the object `key`, made with `fields` (its content
    /// type); returns its ID.
    func beginMultipartUpload(of key: String, fields: [SignatureV4.Field]) async throws -> String {
        let answer = try await send(.POST, key: key, query: [("uploads", "")], fields: fields, what: "beginning the multipart upload of \(key)")
        guard let id = S3XML.text(of: "UploadId", in: answer.body) else {
            throw ObjectStorageError.refused(what: "beginning the multipart upload of \(key)", status: answer.status, code: nil,
                                             message: "no UploadId in the answer")
        }
        return id
    }

    /// Sends `bytes` as part `number` of the multipart upload `uploadID` of `key`, each
    /// attempt within `timeout`; returns the part. When `checksummed`, with its CRC32
    /// (`x-amz-checksum-crc32`, as AWS's SDKs send it), which the store checks.
    func sendPart(_ bytes: ByteBuffer, number: Int, of key: String, uploadID: String, checksummed: Bool = false,
                  timeout: TimeAmount = .minutes(5)) async throws -> ObjectPart {
        let checksum = checksummed ? S3Checksum.crc32(of: bytes) : nil
        let fields: [SignatureV4.Field] = checksum.map { [("x-amz-checksum-crc32", $0), ("x-amz-sdk-checksum-algorithm", "CRC32")] } ?? []
        let answer = try await send(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], fields: fields, body: bytes,
                                    what: "sending part \(number) of \(key)", timeout: timeout)
        guard let etag = answer.etag else {
            throw ObjectStorageError.refused(what: "sending part \(number) of \(key)", status: answer.status, code: nil, message: "no ETag in the answer")
        }
        return ObjectPart(number: number, etag: etag, size: Int64(bytes.readableBytes), checksumCRC32: checksum)
    }

    /// Copies the bytes `range` of the object `source` as part `number` of the multipart
    /// upload `uploadID` of `key` (`UploadPartCopy`): the store copies them, nothing passes
    /// through the receiver; returns the part. A copy that answers 200 and fails in its body
    /// fails as that error would (sent again when it is `InternalError`, as S3 says to).
    func copyPart(from source: String, range: Range<Int64>, number: Int, of key: String, uploadID: String) async throws -> ObjectPart {
        let what = "copying \(source) as part \(number) of \(key)"
        let fields: [SignatureV4.Field] = [
            ("x-amz-copy-source", "/" + storage.bucket + "/" + S3URIEncoding.encode(source, keepingSlash: true)),
            ("x-amz-copy-source-range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"),
        ]
        let answer = try await send(.PUT, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], fields: fields, what: what,
                                    errorInBody: true)
        guard let etag = S3XML.text(of: "ETag", in: answer.body) else {
            throw ObjectStorageError.refused(what: what, status: answer.status, code: nil, message: "no ETag in the answer")
        }
        return ObjectPart(number: number, etag: etag, size: Int64(range.count))
    }

    /// Makes the object `key` from `parts` of the multipart upload `uploadID`. S3 may answer
    /// 200 and fail the completion in the body: that fails as its error would (sent again
    /// when it is `InternalError` or a throttling code).
    func completeMultipartUpload(of key: String, uploadID: String, parts: [ObjectPart]) async throws {
        let list = parts.map { part in
            "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3XML.escaped(part.etag))</ETag>"
                + (part.checksumCRC32.map { "<ChecksumCRC32>\(S3XML.escaped($0))</ChecksumCRC32>" } ?? "") + "</Part>"
        }.joined()
        _ = try await send(.POST, key: key, query: [("uploadId", uploadID)],
                           body: ByteBuffer(string: "<CompleteMultipartUpload>\(list)</CompleteMultipartUpload>"), what: "completing the multipart upload of \(key)", errorInBody: true)
    }

    /// Aborts the multipart upload `uploadID` of `key`, best effort (what is left, the
    /// bucket's `AbortIncompleteMultipartUpload` rule removes).
    func abortMultipartUpload(of key: String, uploadID: String, attempts: Int = S3Client.attempts) async {
        await sendDetached(.DELETE, key: key, query: [("uploadId", uploadID)], what: "aborting the multipart upload of \(key)", attempts: attempts)
    }

    /// Tags the object `key` with its SHA-256 (`sha256`): a multipart object's, known only
    /// once it is whole. Nothing where the store implements no tagging (``S3Tagging``;
    /// `probing`: the start-up probe's object, which tells it).
    func tagSHA256(of key: String, _ sha256: String, probing: Bool = false) async throws {
        let tagging = "<Tagging><TagSet><Tag><Key>sha256</Key><Value>\(sha256)</Value></Tag></TagSet></Tagging>"
        guard storage.tagging.isSupported else { return }
        do {
            _ = try await send(.PUT, key: key, query: [("tagging", "")], body: ByteBuffer(string: tagging), what: "tagging \(key)")
        } catch let failure as ObjectStorageError where S3Tagging.saysUnsupported(failure, probing: probing) {
            storage.tagging.markUnsupported()
        }
    }

    /// Sends a request whose answer does not matter (a removal, an abort, a release) in a
    /// task of its own, so that it is sent even when the caller's task is cancelled (its
    /// client gone); a failure is ignored: what it leaves stays for the bucket's lifecycle
    /// rule, or runs out.
    func sendDetached(_ method: HTTPMethod, key: String, query: [SignatureV4.Field] = [], fields: [SignatureV4.Field] = [], what: String,
                      attempts: Int = S3Client.attempts) async {
        let client = self
        await Task { _ = try? await client.send(method, key: key, query: query, fields: fields, what: what, attempts: attempts) }.value
    }
}
