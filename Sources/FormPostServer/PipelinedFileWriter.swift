import Crypto
import NIOCore
import NIOPosix

/// Writes received buffers to an open file in batches, as ``BatchedFileWriter`` does, with
/// one batch in flight while the next is gathered, and the upload's running SHA-256 taken
/// of each batch in the same job on NIO's thread pool: the request's own task is left
/// with reading the connection (and a checksum of its own), so hashing and writing run
/// beside it. Two batches are held at most. Used by ``BodyAppender``.
struct PipelinedFileWriter {
    /// A running hash, touched by one job at a time (each job waits for the one before).
    private final class Digest: @unchecked Sendable {
        var hasher: SHA256?
        init(_ hasher: SHA256?) { self.hasher = hasher }
    }

    private let descriptor: Int32
    private let threadPool: NIOThreadPool
    private let digest: Digest
    private var pending: [ByteBuffer] = []
    private var pendingBytes = 0
    private var inFlight: Task<Void, any Error>?

    /// A writer to `descriptor` that goes on with `digest` (nil: no digest kept).
    init(descriptor: Int32, threadPool: NIOThreadPool, digest: SHA256?) {
        self.descriptor = descriptor
        self.threadPool = threadPool
        self.digest = Digest(digest)
    }

    /// Takes `bytes` (keeping the buffer, not a copy); sends a batch on once it is full.
    mutating func write(_ bytes: ByteBuffer) async throws {
        pending.append(bytes)
        pendingBytes += bytes.readableBytes
        if pendingBytes >= BatchedFileWriter.batchSize { try await dispatch() }
    }

    /// Writes everything taken, and returns the running hash over it. The writes go on
    /// when the task is cancelled (its request went away): what was received is kept.
    mutating func finish() async throws -> SHA256? {
        try await dispatch()
        try await waitForInFlight()
        return digest.hasher
    }

    /// Waits for the batch in flight, then sends the gathered one.
    private mutating func dispatch() async throws {
        try await waitForInFlight()
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        let (descriptor, threadPool, digest) = (self.descriptor, self.threadPool, self.digest)
        // A task of its own, which a cancellation of the request's does not reach.
        inFlight = Task {
            try await threadPool.runIfActive {
                for buffer in batch {
                    try buffer.withUnsafeReadableBytes { bytes in
                        try DescriptorWrites.writeAll(bytes, to: descriptor)
                        digest.hasher?.update(bufferPointer: bytes)
                    }
                }
            }
        }
    }

    private mutating func waitForInFlight() async throws {
        guard let job = inFlight else { return }
        inFlight = nil
        try await job.value
    }
}
