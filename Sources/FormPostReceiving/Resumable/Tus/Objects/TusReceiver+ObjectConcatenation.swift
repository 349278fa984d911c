import NIOCore

/// tus's concatenation on object storage: partial uploads are kept as any upload (their
/// objects under `PREFIX.tus/`, never among stored files), and a final upload joins them
/// with copies the store makes (``ObjectUploadStore/join(_:into:uploadID:partSize:)``). Its
/// SHA-256 is read back from the joined object, the bytes having passed through no receiver.
extension TusReceiver {
    /// `POST` of a final upload joining `partials`, each complete, on object storage: stored
    /// before it is answered, with `metadata`, for `client`, with what its authorization
    /// `granted`. Each partial upload's lease is held meanwhile, and each names the final
    /// upload before its bytes are joined; they go once its completion is recorded. Asked
    /// for again, a final whose completion was recorded is answered again; one that never
    /// was (its receiver stopped) is joined anew.
    ///
    /// - Throws: ``TusFailure`` 400 as on the disk; ``ObjectUploadFailure/held`` (423) while
    ///   another request holds one of them.
    func createFinalObject(joining partials: [String], metadata: String?, client: String?, granted: [String: String]?,
                           in objects: TusObjects) async throws -> ReceiverResponse {
        try await objects.holdingLeases(partials) { leases in
            var states: [(state: TusObjects.State, etag: String)] = []
            for id in partials {
                guard let (state, etag) = try await objects.load(id), !objects.isExpired(state, expiry: expiry) else {
                    throw TusFailure(.badRequest, "the partial upload \(id) does not exist")
                }
                try Self.checkJoinable(state.info, id: id, at: state.offset, client: client, granted: granted)
                states.append((state, etag))
            }
            let joined = Set(states.map(\.state.info.joinedInto))
            guard let abandoned = try await unfinishedJoins(joined, in: objects) else {
                return try await joinedBefore(joined, partials: partials) { final in
                    let state = try await objects.current(final, expiry: expiry)
                    return (state.info, state.offset)
                }
            }
            let info = try finalInfo(joining: partials, infos: states.map(\.state.info), metadata: metadata, client: client, granted: granted)
            let id = UploadStore.randomName()
            try await objects.start(id, info: info)
            ReceiverMetrics.upload(.tus, .created)
            try await objects.holdingLease(id) { lease in
                guard let (final, etag) = try await objects.load(id) else { throw ObjectUploadFailure.notFound }
                var sources: [TusObjects.JoinedObject] = []
                for (index, (state, etag)) in states.enumerated() {
                    var marked = state
                    marked.info.joinedInto = id
                    try leases[index].check()
                    states[index] = (marked, try await objects.save(marked, id: partials[index], replacing: etag))
                    if let whole = try await objects.wholeObject(of: marked) { sources.append(whole) }
                }
                var rest = ByteBuffer()
                var parts: [TusObjects.State.Part] = []
                if let uploadID = final.uploadID {
                    parts = try await objects.join(sources, into: final.key, uploadID: uploadID, partSize: objects.partSize(of: final))
                } else {
                    // Fewer bytes than a part in all: read, and stored as one object.
                    for source in sources {
                        var bytes = try await objects.store.bytes(of: source.key, range: 0..<source.size, what: "reading \(source.key) to join it")
                        rest.writeBuffer(&bytes)
                    }
                }
                for held in leases + [lease] { try held.check() }
                _ = try await objects.complete(id, state: final, etag: etag, parts: parts, uploadID: final.uploadID, rest: rest, digest: nil,
                                               basePath: basePath, logger: logger)
            }
            // Its completion recorded, the final upload holds every byte: the partial uploads'
            // objects go (their states stay, naming it, until they expire).
            for (state, _) in states {
                for key in Set([state.key, state.tail?.key].compactMap { $0 }) where key.hasPrefix(objects.statePrefix) {
                    await objects.removeObject(key)
                }
            }
            for partial in partials { digests.remove(partial) }
            for final in abandoned { await removeUnfinishedJoin(final, in: objects) }
            return ReceiverResponse(status: .created, headers: [
                .location: basePath + "/" + id, .uploadExpires: lifetime.httpDate(created: info.created), .uploadOffset: String(info.length ?? 0),
            ])
        }
    }

    /// The final uploads that partial uploads naming `joined` name, when none of them is
    /// whole: their receivers stopped mid-join, and the partial uploads' bytes are all
    /// there, to be joined anew. Nil when one is whole, or gone (their bytes may be too).
    private func unfinishedJoins(_ joined: Set<String?>, in objects: TusObjects) async throws -> [String]? {
        var unfinished: [String] = []
        for case let final? in joined {
            guard let (state, _) = try await objects.load(final), !state.info.isWhole else { return nil }
            unfinished.append(final)
        }
        return unfinished
    }

    /// Removes `final`, a join that never finished, its multipart upload aborted, under its
    /// lease — unless it is whole by now; best effort (else it expires).
    private func removeUnfinishedJoin(_ final: String, in objects: TusObjects) async {
        try? await objects.holdingLease(final) { _ in
            guard let (state, _) = try await objects.load(final), !state.info.isWhole else { return }
            await objects.remove(final, state: state, storedObject: false)
        }
    }
}
