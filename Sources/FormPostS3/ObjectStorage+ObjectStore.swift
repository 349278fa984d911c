import FormPostReceiving
import NIOCore

/// The receivers' operations on a bucket (`ObjectStore`) as S3's
/// requests: conditions as `If-None-Match: *` and `If-Match` (in the form the store
/// compares, ``unquotedETagConditions``), the SHA-256 of an object as `x-amz-meta-sha256`
/// or its tag `sha256`, multipart uploads as S3's.
extension ObjectStorage: ObjectStore {
    /// ``partSize(maxFileSize:)-swift.type.method``, for the receivers.
    public func partSize(maxFileSize: Int64) -> Int {
        Self.partSize(maxFileSize: maxFileSize)
    }

    /// This bucket for the leases' requests: through ``leaseClient`` (else
    /// ``defaultLeaseClient`` while ``client`` is ``defaultClient``), each attempt within a
    /// quarter of ``leaseDuration`` (at most 5 minutes), so that a renewal begun a third into
    /// the lease has ended, its two attempts made, before the lease runs out.
    /// The credentials, clock offset and retry quota are this store's.
    public var leaseTraffic: any ObjectStore {
        var leases = self
        leases.client = leaseClient ?? (client === Self.defaultClient ? Self.defaultLeaseClient : client)
        leases.attemptTimeout = TimeAmount(min(leaseDuration / 4, .seconds(300)))
        return leases
    }

    /// Nil when the bucket answers a `HEAD` within 5 s (without the retries of uploads'
    /// requests: a readiness probe asks again soon); else why not, as a sentence.
    public func problem() async -> String? {
        do {
            _ = try await S3Client(storage: self).send(.HEAD, key: nil, what: "looking at the bucket \(bucket)", attempts: 1, timeout: .seconds(5))
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// A `PUT` of the object `key`.
    public func put(_ key: String, body: ByteBuffer, attributes: ObjectAttributes, condition: ObjectCondition, what: String,
                    attempts: Int?) async throws -> ObjectAnswer {
        let fields = fields(of: attributes) + fields(of: condition)
        let answer = try await S3Client(storage: self).send(.PUT, key: key, fields: fields, body: body, what: what, attempts: attempts ?? S3Client.attempts)
        return ObjectAnswer(status: answer.status, etag: answer.etag)
    }

    /// A `GET` of the object `key`, at most `maxBytes` of it.
    public func get(_ key: String, maxBytes: Int, what: String) async throws -> ObjectAnswer {
        let answer = try await S3Client(storage: self).send(.GET, key: key, what: what, maxAnswerBytes: maxBytes)
        return ObjectAnswer(status: answer.status, etag: answer.etag, bytes: answer.bytes)
    }

    /// A `GET` of the object `key` with a `Range`.
    public func bytes(of key: String, range: Range<Int64>, what: String) async throws -> ByteBuffer {
        let answer = try await S3Client(storage: self).send(.GET, key: key, fields: [("range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")],
                                                            what: what, maxAnswerBytes: max(range.count, 1 << 16))
        guard answer.bytes.readableBytes == range.count else {
            throw ObjectStorageError.refused(what: what, status: answer.status, code: nil,
                                             message: "\(answer.bytes.readableBytes) bytes, not the \(range.count) asked for")
        }
        return answer.bytes
    }

    /// A `HEAD` of the object `key` (two attempts): its `Content-Length`.
    public func size(of key: String, what: String) async throws -> Int64? {
        let answer = try await S3Client(storage: self).send(.HEAD, key: key, what: what, attempts: 2)
        return answer.headers.first(name: "content-length").flatMap(Int64.init)
    }

    /// A `GET` of the object `key`, streamed.
    public func read(_ key: String, what: String, each: (ByteBuffer) throws -> Void) async throws {
        try await S3Client(storage: self).read(key, what: what, each: each)
    }

    /// A `DELETE` of the object `key`, detached.
    public func delete(_ key: String, condition: ObjectCondition, what: String, attempts: Int?) async {
        await S3Client(storage: self).sendDetached(.DELETE, key: key, fields: fields(of: condition), what: what, attempts: attempts ?? S3Client.attempts)
    }

    /// `ListObjectsV2` of `prefix`, every page.
    public func list(prefix: String) async throws -> [ListedObject] {
        try await S3Client(storage: self).list(prefix: prefix)
    }

    /// `ListObjectsV2` of `prefix` with the delimiter `/`, every page.
    public func listTopLevel(prefix: String) async throws -> [ListedObject] {
        try await S3Client(storage: self).list(prefix: prefix, delimiter: "/")
    }

    /// `ListMultipartUploads` of `prefix`, every page; undated unless the probe found the
    /// store's dates right (``datesMultipartUploads``) and its listing by prefix
    /// (``listsMultipartUploadsByPrefix``).
    public func listMultipartUploads(prefix: String) async throws -> [ListedMultipartUpload] {
        let listed = try await S3Client(storage: self).listMultipartUploads(prefix: prefix)
        return datesMultipartUploads && listsMultipartUploadsByPrefix ? listed : listed.map { ListedMultipartUpload(key: $0.key, uploadID: $0.uploadID, initiated: nil) }
    }

    /// `CreateMultipartUpload`.
    public func beginMultipartUpload(of key: String, attributes: ObjectAttributes) async throws -> String {
        try await S3Client(storage: self).beginMultipartUpload(of: key, fields: fields(of: attributes))
    }

    /// `UploadPart`.
    public func sendPart(_ bytes: ByteBuffer, number: Int, of key: String, uploadID: String, checksummed: Bool, timeout: Duration) async throws -> ObjectPart {
        try await S3Client(storage: self).sendPart(bytes, number: number, of: key, uploadID: uploadID, checksummed: checksummed, timeout: TimeAmount(timeout))
    }

    /// `UploadPartCopy` with a source range.
    public func copyPart(from source: String, range: Range<Int64>, number: Int, of key: String, uploadID: String) async throws -> ObjectPart {
        try await S3Client(storage: self).copyPart(from: source, range: range, number: number, of: key, uploadID: uploadID)
    }

    /// `CompleteMultipartUpload`, failed when its answer is an error in a 200.
    public func completeMultipartUpload(of key: String, uploadID: String, parts: [ObjectPart]) async throws {
        try await S3Client(storage: self).completeMultipartUpload(of: key, uploadID: uploadID, parts: parts)
    }

    /// `AbortMultipartUpload`, detached.
    public func abortMultipartUpload(of key: String, uploadID: String, attempts: Int?) async {
        await S3Client(storage: self).abortMultipartUpload(of: key, uploadID: uploadID, attempts: attempts ?? S3Client.attempts)
    }

    /// `PutObjectTagging` of the tag `sha256`.
    public func tagSHA256(of key: String, _ sha256: String) async throws {
        try await S3Client(storage: self).tagSHA256(of: key, sha256)
    }

    private func fields(of attributes: ObjectAttributes) -> [SignatureV4.Field] {
        var fields: [SignatureV4.Field] = []
        if let type = attributes.contentType { fields.append(("content-type", type)) }
        if let sha256 = attributes.sha256 { fields.append(("x-amz-meta-sha256", sha256)) }
        if attributes.partChecksums { fields.append(("x-amz-checksum-algorithm", "CRC32")) }
        return fields
    }

    private func fields(of condition: ObjectCondition) -> [SignatureV4.Field] {
        switch condition {
        case .none: []
        case .absent: [("if-none-match", "*")]
        case .matching(let etag): [ifMatch(etag)]
        }
    }
}
