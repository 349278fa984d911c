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
        let outcome = await FormAppender(segments: FormSegments(store: store, id: id), threadPool: threadPool)
            .append(body, startingAt: offset, to: &progress, limit: limit)
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
        let names = (0..<progress.receipt.files.count).map { _ in UploadStore.randomName() }
        let receipt = progress.receipt.receipt(storedAs: names)
        var done = info
        done.answer = StoredAnswer(status: 200, json: String(decoding: UploadReceiver.encodeJSON(receipt), as: UTF8.self))
        done.storingParts = names
        let (store, pending) = (self.store, done)
        return try await threadPool.runIfActive {
            try store.save(pending, id: id)
            return try Self.settle(id, info: pending, in: store)
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
    /// files not yet moved): moves them, saves the upload as settled and removes the rest
    /// of its files; returns the upload as saved. It blocks on the file system.
    static func settle(_ id: String, info: DraftUploadInfo, in store: UploadStore) throws -> DraftUploadInfo {
        guard let names = info.storingParts else { return info }
        let segments = FormSegments(store: store, id: id)
        try store.reach(.formAnswered)
        for (index, name) in names.enumerated() {
            try segments.storePart(index, as: name)
            if index == 0 { try store.reach(.formPartMoved) }
        }
        try store.syncStoredFiles()
        var settled = info
        settled.storingParts = nil
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
    /// again by reading what is stored once (and, for a form stored whole, writing it split).
    private func progress(of id: String, info: DraftUploadInfo, at offset: Int64) async throws -> FormUploadProgress {
        if let kept = progresses.take(id, at: offset) { return kept }
        var progress = try FormUploadProgress(contentType: info.contentType, configuration: configuration)
        let segments = FormSegments(store: store, id: id)
        let (extents, splices, skeleton) = try await threadPool.runIfActive { () -> ([StoredBody.Extent], Int, Int64) in
            if let raw = try segments.beginSplitting() { return ([StoredBody.Extent(path: segments.rawPath, offset: 0, length: raw)], -1, 0) }
            let splices = segments.splices()
            let (skeleton, parts) = segments.sizes(parts: splices.count)
            return (segments.extents(splices: splices, skeleton: skeleton, parts: parts), splices.count, skeleton)
        }
        let splitting = splices < 0
        if !splitting {
            // Everything is on disk: it is parsed, not written again.
            progress.durable = extents.reduce(0) { $0 + $1.length }
            progress.skeletonSize = skeleton
            progress.splicesOnDisk = splices
        }
        let outcome = await FormAppender(segments: segments, threadPool: threadPool)
            .append(StoredBody(extents: extents, threadPool: threadPool), startingAt: 0, to: &progress, limit: .max)
        if let fault = outcome.formFault { throw fault }
        if let failure = outcome.failure { throw failure }
        guard !outcome.cut, progress.splitter.fed == extents.reduce(0, { $0 + $1.length }) else {
            throw ReceiverFailure.storage("reading the stored form of upload \(id) again failed")
        }
        if splitting { try await threadPool.runIfActive { segments.endSplitting() } }
        return progress
    }
}
