import NIOCore

/// tus's concatenation on object storage, as tusd's `s3store` does it: partial uploads are
/// kept as any upload (their objects under `PREFIX.tus/`, never among stored files), and a
/// final upload joins them with copies the store makes
/// (``ObjectUploadStore/join(_:into:uploadID:partSize:)``). Its SHA-256 is read back from
/// the joined object, the bytes having passed through no receiver.
extension BucketUploads: UploadJoining where Info == TusUploadInfo {
    /// Whether its completion was never recorded: partial uploads name a final upload
    /// before their objects are joined into it.
    func isUnfinishedJoin(_ final: SavedObjectUpload<TusUploadInfo>) -> Bool {
        !final.info.isWhole
    }

    /// Under every lease (checked before each write): the final upload's multipart upload
    /// begun if it is a part or more; each partial upload saved naming it, then made one
    /// object; those objects joined by the store into the multipart upload (or, fewer bytes
    /// than a part in all, read and stored as one object); its completion recorded and
    /// finished; the partial uploads' objects removed. A join that fails stays named by the
    /// partial uploads, and is joined anew when the final upload is asked for again.
    func join(_ partials: [JoiningPartial<SavedObjectUpload<TusUploadInfo>, HeldLease>], into final: SavedObjectUpload<TusUploadInfo>,
              id: String, holding held: HeldLease, answered: Bool) async throws {
        guard var etag = final.etag else { throw UploadStorageFailure.changed }
        var state = final.state
        // Its parts are copied by the store: its multipart upload declares no checksums.
        assert(state.checksummedParts != true)
        if state.uploadID == nil, let length = state.info.length, length >= Int64(objects.partSize(of: state)) {
            let uploadID = try await objects.beginMultipart(state)
            state.uploadID = uploadID
            do {
                try held.check()
                etag = try await objects.save(state, id: id, replacing: etag)
            } catch {
                // Named by no state: not left behind.
                await objects.abort(uploadID, key: state.key)
                throw error
            }
        }
        var sources: [ObjectUploadStore<TusUploadInfo>.JoinedObject] = []
        for partial in partials {
            guard let partialETag = partial.upload.etag else { throw UploadStorageFailure.changed }
            var marked = partial.upload.state
            marked.info.joinedInto = id
            try partial.hold.check()
            _ = try await objects.save(marked, id: partial.id, replacing: partialETag)
            if let whole = try await objects.wholeObject(of: marked) { sources.append(whole) }
        }
        var rest = ByteBuffer()
        var parts: [ObjectUploadState<TusUploadInfo>.Part] = []
        if let uploadID = state.uploadID {
            parts = try await objects.join(sources, into: state.key, uploadID: uploadID, partSize: objects.partSize(of: state))
        } else {
            for source in sources {
                var bytes = try await objects.store.bytes(of: source.key, range: 0..<source.size, what: "reading \(source.key) to join it")
                rest.writeBuffer(&bytes)
            }
        }
        for partial in partials { try partial.hold.check() }
        try held.check()
        _ = try await objects.complete(id, state: state, etag: etag, parts: parts, uploadID: state.uploadID, rest: rest, digest: nil,
                                       holding: held, basePath: basePath, logger: logger)
        // Its completion recorded, the final upload holds every byte: the partial uploads'
        // objects go (their states stay, naming it, until they expire).
        for partial in partials {
            let kept = partial.upload.state
            for key in Set([kept.key, kept.tail?.key].compactMap { $0 }) where key.hasPrefix(objects.statePrefix) {
                await objects.removeObject(key)
            }
            digests.remove(partial.id)
        }
    }
}
