#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Appends a request's body to a resumable form as it arrives: the form is parsed on the
/// way, each file part's content written once, to its own file, the rest aside
/// (``FormSegments``), so that completing the form moves files instead of parsing and
/// writing it all again. After a write fails, nothing more of the request is written: the
/// upload's offset is where the form's bytes on disk end, in order.
struct FormAppender {
    /// How an append ended.
    struct Outcome {
        /// The upload's offset after it: the form's bytes on disk, in order.
        var offset: Int64
        /// How many of the form's bytes have arrived: the offset, and the bytes the parse
        /// holds back (which a later append sends again).
        var received: Int64 = 0
        /// Whether the request was cut (its client went away) before its end.
        var cut = false
        /// Whether the body went past the limit (nothing past it was taken).
        var overflowed = false
        /// The failure of a write (a full disk), which ended the append.
        var failure: (any Error)?
        /// What is wrong with the form itself (malformed, past a limit): the same bytes
        /// would meet it again.
        var formFault: (any Error)?
    }

    let segments: FormSegments
    let threadPool: NIOThreadPool

    /// Batches of bytes besides the parts' content are written once they reach this size
    /// (else when a file part begins, and at the end of the request).
    static let skeletonBatch = 256 << 10

    /// Takes `body` — the form's bytes from position `start` (``FormUploadProgress/durable``
    /// for an append; 0 to read again what is stored) — into `progress`, not past `limit`
    /// bytes of the form in all. Bytes before what is on disk (`progress.durable` when the
    /// append begins) are parsed, not written again.
    func append<Body: AsyncSequence>(_ body: Body, startingAt start: Int64, to progress: inout FormUploadProgress,
                                     limit: Int64) async -> Outcome where Body.Element == ByteBuffer {
        var run = Run(segments: segments, threadPool: threadPool, onDisk: progress.durable)
        var outcome = Outcome(offset: progress.durable)
        var position = start
        var skip = max(0, progress.splitter.fed - start)
        do {
            for try await var buffer in body {
                outcome.overflowed = BodyAppender.clip(&buffer, at: position, limit: limit)
                position += Int64(buffer.readableBytes)
                if skip > 0 {
                    // Bytes the parser took before and holds back: the client sends them again.
                    let skipped = Int(min(skip, Int64(buffer.readableBytes)))
                    buffer.moveReaderIndex(forwardBy: skipped)
                    skip -= Int64(skipped)
                }
                if buffer.readableBytes > 0 {
                    let pieces: [FormStreamPiece]
                    do {
                        pieces = try progress.splitter.feed(buffer)
                    } catch {
                        outcome.formFault = error
                        break
                    }
                    for piece in pieces {
                        try await run.take(piece, into: &progress)
                        if run.failure != nil { break }
                    }
                }
                if run.failure != nil || outcome.overflowed { break }
            }
        } catch let fault as ReceiverFailure {
            outcome.formFault = fault
        } catch {
            // The client went away (or the request was ended for a newer one).
            outcome.cut = true
        }
        await run.finish(&progress)
        outcome.failure = run.failure
        outcome.offset = progress.durable
        outcome.received = max(position, progress.durable)
        return outcome
    }

    /// The writes of one append: the open part's file and the bytes gathered for `ID.data`.
    private struct Run {
        let segments: FormSegments
        let threadPool: NIOThreadPool
        /// Where the form's bytes on disk ended when the append began: bytes before it are
        /// parsed only.
        let onDisk: Int64
        var skeleton = ByteBuffer()
        var part: PipelinedFileWriter?
        var partDescriptor: Int32 = -1
        var failure: (any Error)?
        /// Whether this append wrote or made a file besides a part's content.
        var wrote = false

        init(segments: FormSegments, threadPool: NIOThreadPool, onDisk: Int64) {
            self.segments = segments
            self.threadPool = threadPool
            self.onDisk = onDisk
        }

        /// Takes one piece of the form.
        ///
        /// - Throws: ``ReceiverFailure/limitExceeded(_:value:)`` when the form goes past a limit.
        mutating func take(_ piece: FormStreamPiece, into progress: inout FormUploadProgress) async throws {
            switch piece {
            case .partBegin(let head):
                progress.receipt.begin(head)
            case .bytes(let at, let bytes, let isContent):
                let parsedOnly = Int(clamping: min(Int64(bytes.readableBytes), max(0, onDisk - at)))
                if parsedOnly > 0, isContent, let before = bytes.getSlice(at: bytes.readerIndex, length: parsedOnly) {
                    try progress.receipt.content(before)
                }
                guard parsedOnly < bytes.readableBytes, let new = bytes.getSlice(at: bytes.readerIndex + parsedOnly, length: bytes.readableBytes - parsedOnly) else { return }
                if isContent, let index = progress.receipt.currentFilePart {
                    if part == nil { await openPart(index, progress: &progress) }
                    guard failure == nil else { return }
                    try progress.receipt.content(new)
                    if await part?.write(new) == false { await closePart(&progress) }
                } else {
                    if isContent { try progress.receipt.content(new) }
                    skeleton.writeImmutableBuffer(new)
                    if skeleton.readableBytes >= FormAppender.skeletonBatch { await writeSkeleton(&progress) }
                }
            case .partEnd:
                if let index = progress.receipt.currentFilePart {
                    if part != nil {
                        await closePart(&progress)
                    } else if index >= progress.splicesOnDisk {
                        // An empty file part: its splice and empty file, so that it is stored too.
                        await openPart(index, progress: &progress)
                        await closePart(&progress)
                    }
                }
                guard failure == nil else { return }
                progress.receipt.end()
            case .end:
                break
            }
        }

        /// Writes what is gathered and closes the part's file; syncs what this append wrote
        /// (``UploadStore/syncForm(_:)``); `progress` then says what is on disk.
        mutating func finish(_ progress: inout FormUploadProgress) async {
            await closePart(&progress)
            await writeSkeleton(&progress)
            guard wrote, failure == nil else { return }
            let (store, id) = (segments.store, segments.id)
            do {
                try await Self.detached(threadPool) { try store.syncForm(id) }
            } catch {
                failure = error
            }
        }

        /// Opens the file of file part `index` — after the bytes before it, and its splice.
        private mutating func openPart(_ index: Int, progress: inout FormUploadProgress) async {
            await writeSkeleton(&progress)
            guard failure == nil else { return }
            let (segments, splice, needsSplice) = (self.segments, progress.skeletonSize, index >= progress.splicesOnDisk)
            do {
                let descriptor = try await Self.detached(threadPool) {
                    if needsSplice { try segments.appendSplice(splice) }
                    return try segments.openPart(index)
                }
                if needsSplice { progress.splicesOnDisk = index + 1 }
                wrote = true
                partDescriptor = descriptor
                part = PipelinedFileWriter(descriptor: descriptor, threadPool: threadPool, digest: progress.receipt.takeHasher())
            } catch {
                failure = error
            }
        }

        private mutating func closePart(_ progress: inout FormUploadProgress) async {
            guard var writer = part else { return }
            part = nil
            let written = await writer.finish()
            close(partDescriptor)
            partDescriptor = -1
            progress.receipt.putHasher(written.digest)
            progress.durable += written.bytes
            if let error = written.failure, failure == nil { failure = error }
        }

        /// Writes the bytes gathered for `ID.data` (none after a failed write).
        private mutating func writeSkeleton(_ progress: inout FormUploadProgress) async {
            guard skeleton.readableBytes > 0 else { return }
            let batch = skeleton
            skeleton = ByteBuffer()
            guard failure == nil else { return }
            let path = segments.skeletonPath
            let result = try? await Self.detached(threadPool) { () -> (Int, ReceiverFailure?) in
                let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { return (0, ReceiverFailure.storing("cannot open an upload", errno: errno)) }
                defer { close(descriptor) }
                return batch.withUnsafeReadableBytes { DescriptorWrites.write($0, to: descriptor) }
            }
            let (written, writeFailure) = result ?? (0, ReceiverFailure.storage("writing an upload failed: the thread pool stopped"))
            progress.skeletonSize += Int64(written)
            progress.durable += Int64(written)
            wrote = true
            if let writeFailure { failure = writeFailure }
        }

        /// Runs `body` on `threadPool` in a task of its own, which a cancellation of the
        /// request's does not reach: what was received is written.
        private static func detached<T: Sendable>(_ threadPool: NIOThreadPool, _ body: @escaping @Sendable () throws -> T) async throws -> T {
            try await Task { try await threadPool.runIfActive(body) }.value
        }
    }
}
