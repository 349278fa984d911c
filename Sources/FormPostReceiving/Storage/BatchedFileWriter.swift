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
    private var pendingSince: ContinuousClock.Instant?

    /// How many bytes are gathered before one write: few system calls and thread hops, and a
    /// bounded amount held per upload.
    static let batchSize = 128 * 1024
    /// How long bytes are gathered at most before they are written, however few: each read
    /// of a slow client is a buffer of its own with room to spare (about 2 KiB for each KiB
    /// it sent), so that a batch of 128 KiB gathered at 1 KiB/s would hold about 256 KiB for
    /// two minutes.
    static let batchAge = Duration.seconds(1)

    /// Whether a batch of `bytes`, gathered since `since`, is to be written now.
    static func isDue(bytes: Int, since: ContinuousClock.Instant?) -> Bool {
        bytes >= batchSize || since.map { ContinuousClock.now - $0 >= batchAge } == true
    }

    init(descriptor: Int32, threadPool: NIOThreadPool) {
        self.descriptor = descriptor
        self.threadPool = threadPool
    }

    /// Takes `bytes` (keeping the buffer, not a copy); writes once a batch is full, or its
    /// first bytes were taken ``batchAge`` ago.
    mutating func write(_ bytes: ByteBuffer) async throws {
        pending.append(bytes)
        pendingBytes += bytes.readableBytes
        if pendingSince == nil { pendingSince = .now }
        if Self.isDue(bytes: pendingBytes, since: pendingSince) { try await flush() }
    }

    /// Writes what is gathered — also when the task was cancelled (its request went away):
    /// what was received is kept.
    mutating func flush() async throws {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        pendingSince = nil
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
