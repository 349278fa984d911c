import NIOCore
import NIOPosix

/// Writes received buffers to an open file in batches: the buffers (slices of the
/// connection's own, not copies) are gathered until ``batchSize`` bytes, then written in one
/// go on NIO's thread pool, so that a slow disk blocks one of its threads, never the Swift
/// concurrency pool. Used by ``FileSink`` (multipart files); appends of resumable uploads
/// go through ``PipelinedFileWriter``.
struct BatchedFileWriter {
    /// The file written to; the caller opened it and closes it.
    let descriptor: Int32
    private let threadPool: NIOThreadPool
    private var pending: [ByteBuffer] = []
    private var pendingBytes = 0

    /// How many bytes are gathered before one write: few system calls and thread hops, and a
    /// bounded amount held per upload.
    static let batchSize = 128 * 1024

    init(descriptor: Int32, threadPool: NIOThreadPool) {
        self.descriptor = descriptor
        self.threadPool = threadPool
    }

    /// Takes `bytes` (keeping the buffer, not a copy); writes once a batch is full.
    mutating func write(_ bytes: ByteBuffer) async throws {
        pending.append(bytes)
        pendingBytes += bytes.readableBytes
        if pendingBytes >= Self.batchSize { try await flush() }
    }

    /// Writes what is gathered — also when the task was cancelled (its request went away):
    /// what was received is kept.
    mutating func flush() async throws {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        let (descriptor, threadPool) = (self.descriptor, self.threadPool)
        let write: @Sendable () async throws -> Void = {
            try await threadPool.runIfActive {
                for buffer in batch { try buffer.withUnsafeReadableBytes { try DescriptorWrites.writeAll($0, to: descriptor) } }
            }
        }
        if Task.isCancelled {
            // A task of its own, which the cancellation does not reach.
            try await Task { try await write() }.value
        } else {
            try await write()
        }
    }
}
