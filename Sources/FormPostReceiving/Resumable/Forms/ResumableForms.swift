#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart
import NIOCore
import NIOPosix

/// The resumable forms of a ``ResumableUploadReceiver``: each is parsed as its appends
/// arrive, its file parts written once to files of their own (``FormSegments``), so that
/// completing it moves those files into the directory and answers the receipt — the same
/// receipt, with the same limits, as the ``UploadReceiver`` answers for the form sent in
/// one request. Every method is called under the upload's lock.
struct ResumableForms: Sendable {
    let store: UploadStore
    let configuration: ReceiverConfiguration
    let threadPool: NIOThreadPool
    let progresses: FormProgresses

    /// Appends `body`, the form's bytes from `offset` (its bytes on disk), not past `limit`.
    /// A form found faulty ends the append with ``FormAppender/Outcome/formFault``.
    ///
    /// - Throws: A failure to read what is stored, when the form's parse must be made again.
    func append<Body: AsyncSequence>(_ body: Body, to id: String, info: DraftUploadInfo, at offset: Int64,
                                     limit: Int64) async throws -> FormAppender.Outcome where Body.Element == ByteBuffer {
        var progress: FormUploadProgress
        do {
            progress = try await self.progress(of: id, info: info, at: offset)
        } catch where Self.isAboutTheForm(error) {
            return FormAppender.Outcome(offset: offset, formFault: error)
        }
        let segments = FormSegments(store: store, id: id)
        var outcome = await FormAppender(segments: segments, threadPool: threadPool)
            .append(body, startingAt: offset, to: &progress, limit: limit)
        await endSplitting(segments, progress: &progress)
        // While its raw file stays, the form's offset is all of it.
        if let raw = progress.rawSize { outcome.offset = max(outcome.offset, raw) }
        if outcome.failure == nil, outcome.formFault == nil, !outcome.overflowed { progresses.put(id, progress) }
        return outcome
    }

    /// Completes the form `id`, whose every byte is on disk: its files are moved into the
    /// directory and its receipt saved as the upload's answer; returns that answer. The
    /// stored names are saved with the answer before any file moves, so that a server
    /// stopped meanwhile moves the rest (``settle(_:info:)``) and answers the same receipt.
    /// A form that is not whole (no closing delimiter) is answered 400 for good.
    ///
    /// - Throws: A failure to read or move the files: the upload stays, to be completed again.
    func complete(_ id: String, info: DraftUploadInfo) async throws -> DraftUploadInfo {
        let offset = info.length ?? 0
        var progress: FormUploadProgress
        do {
            progress = try await self.progress(of: id, info: info, at: offset)
            try progress.splitter.finish()
        } catch where Self.isAboutTheForm(error) {
            return try await fault(error, id: id, info: info)
        }
        progresses.remove(id)
        try await readMissingDigests(of: FormSegments(store: store, id: id), into: &progress)
        let names = (0..<progress.receipt.files.count).map { _ in UploadStore.randomName() }
        let receipt = progress.receipt.receipt(storedAs: names)
        var done = info
        done.answer = StoredAnswer(status: 200, json: String(decoding: UploadReceiver.encodeJSON(receipt), as: UTF8.self))
        done.storingParts = names
        done.event = UploadEventOutbox.newID()
        let (store, pending) = (self.store, done)
        return try await threadPool.runIfActive {
            try store.save(pending, id: id)
            return try Self.settle(id, info: pending, in: store)
        }
    }

    /// Refuses the form `id`, whose every byte arrived while its bytes on disk (`offset`)
    /// fall short of its length — its parse holds its last bytes back: it ends before its
    /// closing delimiter, which is saved as its answer, for good (``fault(_:id:info:)``);
    /// returns the upload so answered, or nil when its parse finds nothing wrong.
    ///
    /// - Throws: A failure to read what is stored, or to save the answer.
    func refuseUnfinished(_ id: String, info: DraftUploadInfo, at offset: Int64) async throws -> DraftUploadInfo? {
        do {
            var progress = try await self.progress(of: id, info: info, at: offset)
            progresses.put(id, progress)
            guard !progress.splitter.isComplete else { return nil }
            try progress.splitter.finish()
            return nil
        } catch where Self.isAboutTheForm(error) {
            return try await fault(error, id: id, info: info)
        }
    }

    /// Ends the form `id` with the answer to `error`, what is wrong with the form itself,
    /// for good: saved as its answer, its files removed; returns the upload so answered.
    func fault(_ error: any Error, id: String, info: DraftUploadInfo) async throws -> DraftUploadInfo {
        progresses.remove(id)
        let (message, status) = UploadReceiver.errorAnswer(for: error)
        var done = info
        done.answer = StoredAnswer(status: status.code, json: String(decoding: UploadReceiver.encodeJSON(ErrorBody(error: message)), as: UTF8.self))
        let (store, saved) = (self.store, done)
        try await threadPool.runIfActive {
            try store.save(saved, id: id)
            FormSegments(store: store, id: id).removeAll()
            store.census.completed(id)
        }
        return done
    }

    /// Finishes what a completion of the form `id` left undone (`info` is answered, some
    /// files not yet moved): moves them, records its `post-finish` event, saves the upload as
    /// settled and removes the rest of its files; returns the upload as saved. It blocks on
    /// the file system.
    static func settle(_ id: String, info: DraftUploadInfo, in store: UploadStore) throws -> DraftUploadInfo {
        guard let names = info.storingParts else { return info }
        let segments = FormSegments(store: store, id: id)
        try store.reach(.formAnswered)
        for (index, name) in names.enumerated() {
            try segments.storePart(index, as: name)
            if index == 0 { try store.reach(.formPartMoved) }
        }
        try store.syncStoredFiles()
        if let answer = info.answer, answer.status == 200, let receipt = try? JSONDecoder().decode(Receipt.self, from: Data(answer.json.utf8)) {
            try store.announce(info.event(receipt: receipt), as: info.event ?? UploadEventOutbox.legacyID(of: names.first ?? id))
        }
        try store.reach(.afterEvent)
        var settled = info
        settled.storingParts = nil
        settled.event = nil
        try store.save(settled, id: id)
        segments.removeAll()
        store.census.completed(id)
        return settled
    }

    /// The form's offset: its bytes on disk. It blocks on the file system.
    static func offset(of id: String, in store: UploadStore) -> Int64 {
        FormSegments(store: store, id: id).offset()
    }

    /// Whether `error`, met reading a form, is the form's own: malformed (400), past a limit
    /// (413), of another type (415) — the same bytes would meet it again.
    static func isAboutTheForm(_ error: any Error) -> Bool {
        switch error {
        case is MultipartError, ReceiverFailure.limitExceeded, ReceiverFailure.unsupportedMediaType: true
        default: false
        }
    }

    /// The parse of the form `id` at `offset`: the one kept since the last append, or made
    /// again — from `ID.data` alone and the noted digests of its file parts when it is split
    /// (``parseAgain(_:info:layout:)``), else by reading what is stored once (and, for a
    /// form stored whole, writing it split).
    private func progress(of id: String, info: DraftUploadInfo, at offset: Int64) async throws -> FormUploadProgress {
        if let kept = progresses.take(id, at: offset) { return kept }
        let segments = FormSegments(store: store, id: id)
        let layout = try await threadPool.runIfActive { () -> Layout in
            if let raw = try segments.beginSplitting() { return Layout(raw: raw) }
            let splices = segments.splices()
            let (skeleton, parts) = segments.sizes(parts: splices.count)
            return Layout(splices: splices, skeleton: skeleton, parts: parts, digests: segments.digests())
        }
        if layout.raw == nil, let progress = try await parseAgain(segments, info: info, layout: layout) { return progress }
        var progress = try FormUploadProgress(contentType: info.contentType, configuration: configuration)
        let extents = layout.raw.map { [StoredBody.Extent(path: segments.rawPath, offset: 0, length: $0)] }
            ?? segments.extents(splices: layout.splices, skeleton: layout.skeleton, parts: layout.parts)
        let total = extents.reduce(0) { $0 + $1.length }
        if layout.raw == nil {
            // Everything is on disk: it is parsed, not written again.
            progress.durable = total
            progress.skeletonSize = layout.skeleton
            progress.splicesOnDisk = layout.splices.count
        }
        let outcome = await FormAppender(segments: segments, threadPool: threadPool)
            .append(StoredBody(extents: extents, threadPool: threadPool), startingAt: 0, to: &progress, limit: .max)
        progresses.noteRebuild(bytesRead: total)
        if let fault = outcome.formFault { throw fault }
        if let failure = outcome.failure { throw failure }
        guard !outcome.cut, progress.splitter.fed == total else {
            throw ReceiverFailure.storage("reading the stored form of upload \(id) again failed")
        }
        if layout.raw != nil { progress.rawSize = total }
        await endSplitting(segments, progress: &progress)
        return progress
    }

    /// A form's files on disk, as a parse made again finds them.
    private struct Layout: Sendable {
        /// The size of its raw file, when its bytes are (to be) split again.
        var raw: Int64?
        var splices: [Int64] = []
        var skeleton: Int64 = 0
        var parts: [Int64] = []
        /// The noted digests of its first file parts that ended.
        var digests: [String] = []
    }

    /// The parse of a split form made again from its `ID.data` alone — its file parts seen
    /// empty, then given their content's size and SHA-256 (noted, or for those not noted yet
    /// read from their files once, and noted); the SHA-256 of the file part still arriving
    /// is read from its file once it ends — so that making it again costs the form's bytes
    /// besides its files' content, not all of them. Nil when the bytes the parse holds back
    /// at the end of `ID.data` would lie before some file part's content (then all is read).
    private func parseAgain(_ segments: FormSegments, info: DraftUploadInfo, layout: Layout) async throws -> FormUploadProgress? {
        var progress = try FormUploadProgress(contentType: info.contentType, configuration: configuration)
        let content = layout.parts.reduce(0, +)
        // Everything is on disk: it is parsed, not written again.
        progress.durable = layout.skeleton + content
        progress.skeletonSize = layout.skeleton
        progress.splicesOnDisk = layout.splices.count
        let extents = layout.skeleton > 0 ? [StoredBody.Extent(path: segments.skeletonPath, offset: 0, length: layout.skeleton)] : []
        let outcome = await FormAppender(segments: segments, threadPool: threadPool)
            .append(StoredBody(extents: extents, threadPool: threadPool), startingAt: 0, to: &progress, limit: .max)
        if let fault = outcome.formFault { throw fault }
        if let failure = outcome.failure { throw failure }
        guard !outcome.cut, progress.splitter.fed == layout.skeleton else {
            throw ReceiverFailure.storage("reading the stored form of upload \(segments.id) again failed")
        }
        let heldFrom = layout.skeleton - progress.splitter.heldCount
        guard zip(layout.splices, layout.parts).allSatisfy({ splice, size in size == 0 || splice <= heldFrom }) else {
            progresses.noteRebuild(bytesRead: layout.skeleton)
            return nil
        }
        progress.splitter.skip(content)
        let ended = progress.receipt.files.count
        let noted = Array(layout.digests.prefix(ended))
        let (read, digests) = try await threadPool.runIfActive { () -> (Int64, [String]) in
            var read: Int64 = 0
            var digests: [String] = []
            for index in noted.count..<ended {
                let (digest, bytes) = try segments.digestOfPart(index)
                digests.append(digest)
                read += bytes
            }
            segments.noteDigests(digests, after: noted.count)
            return (read, digests)
        }
        for (index, digest) in (noted + digests).enumerated() {
            progress.receipt.restoreFile(index, size: index < layout.parts.count ? layout.parts[index] : 0, sha256: digest)
        }
        if let current = progress.receipt.currentFilePart, current < layout.parts.count, layout.parts[current] > 0 {
            progress.receipt.resumeFile(size: layout.parts[current])
        }
        progresses.noteRebuild(bytesRead: layout.skeleton + read)
        return progress
    }

    /// Reads the SHA-256 of the file parts of `progress` whose digest was not taken as their
    /// content arrived (``FormReceiptBuilder/resumeFile(size:)``) from their files.
    private func readMissingDigests(of segments: FormSegments, into progress: inout FormUploadProgress) async throws {
        let missing = progress.receipt.files.indices.filter { progress.receipt.files[$0].sha256.isEmpty }
        guard !missing.isEmpty else { return }
        let digests = try await threadPool.runIfActive { try missing.map { try segments.digestOfPart($0) } }
        progresses.noteRebuild(bytesRead: digests.reduce(0) { $0 + $1.read }, rebuilt: false)
        for (index, digest) in zip(missing, digests) { progress.receipt.setDigest(index, sha256: digest.sha256) }
    }

    /// Removes the raw file of a form split again once the split layout holds all its bytes:
    /// until then, the form's offset is the raw file's size (``FormSegments/offset()``), and a
    /// parse made again splits it again from its start.
    private func endSplitting(_ segments: FormSegments, progress: inout FormUploadProgress) async {
        guard let raw = progress.rawSize, progress.durable >= raw else { return }
        guard (try? await threadPool.runIfActive({ segments.endSplitting() })) != nil else { return }
        progress.rawSize = nil
    }
}
