import NIOCore

/// Joining uploads in object storage (tus's concatenation), as tusd's `s3store` does: each
/// upload's bytes made into one object, then those objects copied by the store, in order,
/// into the parts of the joined upload's multipart upload, without passing through the
/// receiver — but for the pieces too small to be a part of their own, read and sent.
extension ObjectUploadStore {
    /// An object whose bytes are joined: its key and size.
    struct JoinedObject: Equatable {
        var key: String
        var size: Int64
    }

    /// S3's smallest part but the last.
    static var minimumPartSize: Int64 { 5 << 20 }
    /// The largest range copied as one part: within S3's 5 GiB, short enough that a copy
    /// ends well within a lease.
    static var largestCopiedPart: Int64 { 1 << 30 }

    /// The object holding every byte of `state`'s upload, whole (its length reached): its
    /// tail when it has no multipart upload, or its multipart upload completed with its
    /// tail as the last part — unless that object is whole already (a join taken up again).
    /// Nil for an empty upload. Call it holding the upload's lease.
    func wholeObject(of state: State) async throws -> JoinedObject? {
        let length = state.offset
        guard let uploadID = state.uploadID else { return state.tail.map { JoinedObject(key: $0.key, size: $0.size) } }
        let object = JoinedObject(key: state.key, size: length)
        if await size(of: state.key) == length { return object }
        var parts = state.parts
        if let tail = state.tail {
            parts.append(try await sendPart(try await read(tail, partSize: partSize(of: state)), number: parts.count + 1, key: state.key,
                                            uploadID: uploadID, checksummed: state.checksummedParts == true))
        }
        try await store.completeMultipartUpload(of: state.key, uploadID: uploadID, parts: parts)
        return object
    }

    /// Makes `objects`, in order, the parts of the multipart upload `uploadID` of `key`, each
    /// part at most ``largestCopiedPart``: a range of at least ``minimumPartSize`` is copied by
    /// the store (`ObjectStore/copyPart(from:range:number:of:uploadID:)`); shorter ones
    /// (but the last) are read and gathered, with what follows them, into a part of
    /// `partSize`, sent from here. Holds at most a part's bytes.
    func join(_ objects: [JoinedObject], into key: String, uploadID: String, partSize: Int) async throws -> [State.Part] {
        var parts: [State.Part] = []
        var gathered = ByteBuffer()
        for (index, object) in objects.enumerated() {
            let isLast = index == objects.count - 1
            var position: Int64 = 0
            while position < object.size {
                let left = object.size - position
                if gathered.readableBytes == 0, left >= Self.minimumPartSize || isLast {
                    let count = min(left, Self.largestCopiedPart)
                    parts.append(try await store.copyPart(from: object.key, range: position..<position + count, number: parts.count + 1,
                                                          of: key, uploadID: uploadID))
                    position += count
                    continue
                }
                let count = min(left, Int64(partSize - gathered.readableBytes))
                var bytes = try await store.bytes(of: object.key, range: position..<position + count, what: "reading \(object.key) to join it")
                gathered.writeBuffer(&bytes)
                position += count
                if gathered.readableBytes >= partSize {
                    parts.append(try await sendPart(gathered, number: parts.count + 1, key: key, uploadID: uploadID, checksummed: false))
                    gathered.clear()
                }
            }
        }
        if gathered.readableBytes > 0 {
            parts.append(try await sendPart(gathered, number: parts.count + 1, key: key, uploadID: uploadID, checksummed: false))
        }
        return parts
    }

}
