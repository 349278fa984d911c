import FormPostDigests
import NIOCore
import NIOPosix

/// Writes received buffers to an open file in batches, as ``BatchedFileWriter`` does, with
/// one batch in flight while the next is gathered, and the upload's running SHA-256 taken
/// of each batch in the same job on NIO's thread pool: the request's own task is left
/// with reading the connection (and a checksum of its own), so hashing and writing run
/// beside it. Two batches are held at most. Used by ``BodyAppender`` and ``FormAppender``.
///
/// The first write that fails stops the writer: nothing taken after it is written (the
/// descriptor appends, so a later batch would land after a hole), and what it reports —
/// the bytes written, and the hash — covers exactly what reached the file in order, the
/// first bytes of the failed write included.
struct PipelinedFileWriter {
    /// What the writes did: touched by one job at a time (each job waits for the one
    /// before), and read by the writer once no job is in flight.
    private final class Progress: @unchecked Sendable {
        var hasher: SHA256Hasher?
        var written: Int64 = 0
        init(_ hasher: SHA256Hasher?) { self.hasher = hasher }
    }

    /// What a finished writer wrote.
    struct Written {
        /// How many bytes reached the file, in order; nothing after them was written.
        var bytes: Int64
        /// The running hash, over the bytes before and these (nil: none was kept).
        var digest: SHA256Hasher?
        /// The failure that stopped the writes, if one did: what was taken after it was dropped.
        var failure: (any Error)?
    }

    private let descriptor: Int32
    private let threadPool: NIOThreadPool
    private let progress: Progress
    private var pending: [ByteBuffer] = []
    private var pendingBytes = 0
    private var pendingSince: ContinuousClock.Instant?
    private var inFlight: Task<Void, any Error>?
    private var failure: (any Error)?

    /// A writer to `descriptor` that goes on with `digest` (nil: no digest kept).
    init(descriptor: Int32, threadPool: NIOThreadPool, digest: SHA256Hasher?) {
        self.descriptor = descriptor
        self.threadPool = threadPool
        self.progress = Progress(digest)
    }

    /// Takes `bytes` (keeping the buffer, not a copy); sends a batch on once it is full, or
    /// its first bytes were taken ``BatchedFileWriter/batchAge`` ago. Returns false once a
    /// write has failed: the writer takes nothing more.
    mutating func write(_ bytes: ByteBuffer) async -> Bool {
        guard failure == nil else { return false }
        pending.append(bytes)
        pendingBytes += bytes.readableBytes
        if pendingSince == nil { pendingSince = .now }
        if BatchedFileWriter.isDue(bytes: pendingBytes, since: pendingSince) { await dispatch() }
        return failure == nil
    }

    /// Writes everything taken (unless a write failed), syncs what was written to the disk
    /// (``FileSync/data(_:what:)``, once, when anything was written — after a failed write
    /// too, so that the bytes written before it count only once they are on the disk), and
    /// tells what was written. The writes and the sync go on when the task is cancelled (its
    /// request went away): what was received is kept. When the sync fails, nothing of this
    /// writer's bytes is reported written (the caller cuts them off) and no hash is given.
    mutating func finish() async -> Written {
        await dispatch()
        await waitForInFlight()
        if progress.written > 0 {
            let (descriptor, threadPool) = (self.descriptor, self.threadPool)
            do {
                try await Task { try await threadPool.runIfActive { try FileSync.data(descriptor) } }.value
            } catch {
                return Written(bytes: 0, digest: nil, failure: failure ?? error)
            }
        }
        return Written(bytes: progress.written, digest: progress.hasher, failure: failure)
    }

    /// Waits for the batch in flight, then sends the gathered one — or drops it, when a
    /// write failed.
    private mutating func dispatch() async {
        await waitForInFlight()
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        pendingSince = nil
        guard failure == nil, !batch.isEmpty else { return }
        let (descriptor, threadPool, progress) = (self.descriptor, self.threadPool, self.progress)
        // A task of its own, which a cancellation of the request's does not reach.
        inFlight = Task {
            try await threadPool.runIfActive {
                for buffer in batch {
                    try buffer.withUnsafeReadableBytes { bytes in
                        let (written, failure) = DescriptorWrites.write(bytes, to: descriptor)
                        progress.hasher?.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[..<written]))
                        progress.written += Int64(written)
                        if let failure { throw failure }
                    }
                }
            }
        }
    }

    private mutating func waitForInFlight() async {
        guard let job = inFlight else { return }
        inFlight = nil
        do {
            try await job.value
        } catch {
            failure = error
        }
    }
}
