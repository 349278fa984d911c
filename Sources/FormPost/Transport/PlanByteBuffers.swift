import Dispatch
import Multipart
import NIOCore
import NIOPosix

/// A body plan as an async sequence of NIO buffers. Each iteration starts the body over,
/// so a transport can send it again. In-memory and file bytes are read straight into
/// each buffer (one copy); stream bytes go through a scratch buffer. An optional rate cap
/// delays buffers so that the average stays under `maxBytesPerSecond`.
struct PlanByteBuffers: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let plan: BodyPlan
    let progress: ProgressReporter
    let maxBytesPerSecond: Int64?
    let chunkSize: Int

    init(plan: BodyPlan, progress: ProgressReporter, maxBytesPerSecond: Int64?, chunkSize: Int = 1 << 20) {
        self.plan = plan
        self.progress = progress
        self.maxBytesPerSecond = maxBytesPerSecond
        self.chunkSize = maxBytesPerSecond.map { Int(Swift.min(Int64(chunkSize), Swift.max(1024, $0 / 20))) } ?? chunkSize
    }

    func makeAsyncIterator() -> AsyncIterator {
        progress.restart()
        return AsyncIterator(state: IteratorState(reader: plan.makeChunkReader(chunkSize: chunkSize), chunkSize: chunkSize), progress: progress, maxBytesPerSecond: maxBytesPerSecond)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let state: IteratorState
        let progress: ProgressReporter
        let maxBytesPerSecond: Int64?

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await state.nextBufferOffThePool() else { return nil }
            progress.add(buffer.readableBytes)
            if let rate = maxBytesPerSecond, rate > 0 {
                try await state.pace(sent: progress.bytesSent, rate: rate)
            }
            return buffer
        }
    }

    /// The reader and its scratch memory, released with the iterator.
    ///
    /// Buffers are recycled: the state keeps the last few it handed out and writes into one
    /// again once the channel has let go of it (`ByteBuffer.clear()` reuses storage that is
    /// no longer shared, and allocates only when it still is). Fresh memory costs a page
    /// fault per 4 KiB on first touch; recycled memory is warm and stays in the cache.
    final class IteratorState {
        let reader: BodyChunkReader
        let chunkSize: Int
        let allocator = ByteBufferAllocator()
        let started = DispatchTime.now().uptimeNanoseconds
        private var scratch: UnsafeMutableRawBufferPointer?
        /// The task of ``nextBufferOffLoop(then:_:)``, while it reads.
        private var offLoopRead: Task<Void, Never>?
        /// The buffers handed out last, oldest first, to be written into again.
        private var recycled: [ByteBuffer] = []
        private static let recycledCount = 4

        init(reader: BodyChunkReader, chunkSize: Int) {
            self.reader = reader
            self.chunkSize = chunkSize
        }

        deinit { scratch?.deallocate() }

        /// The next buffer of the body, or nil at its end. File reads may block the thread.
        func nextBuffer() async throws -> ByteBuffer? {
            try Task.checkCancellation()
            guard !reader.isFinished else { return nil }
            var buffer = takeBuffer()
            defer { recycled.append(buffer) }
            let reader = self.reader
            if try fill(&buffer, with: { try reader.readWithoutSuspending(into: $0) }) > 0 { return buffer }
            guard !reader.isFinished else { return nil }
            let memory = scratch ?? UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
            scratch = memory
            let awaited = try await reader.read(into: memory)
            guard awaited > 0 else { return nil }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: memory[0..<awaited]))
            return buffer
        }

        /// The next buffer, without blocking a thread of the cooperative pool: bytes the page
        /// cache holds are read on the calling thread, bytes that must come from the disk on
        /// NIO's thread pool, a stream's bytes awaited; nil at the end.
        func nextBufferOffThePool() async throws -> ByteBuffer? {
            try Task.checkCancellation()
            if let buffer = try nextBufferWithoutBlocking() { return buffer }
            return try await nextBufferFromDiskOrStream()
        }

        /// The next buffer where ``nextBufferWithoutBlocking()`` found none: file bytes read on
        /// NIO's thread pool (never on an event loop, nor blocking the cooperative pool), a
        /// stream's bytes awaited; nil at the end.
        func nextBufferFromDiskOrStream() async throws -> ByteBuffer? {
            try Task.checkCancellation()
            guard !isFinished else { return nil }
            // Only file bytes go to NIO's pool: a stream's are awaited here, so that a stream
            // part never waits in the pool's queue behind other work (a server's writes and
            // syncs in the same process can keep all its threads busy for seconds).
            if reader.isAtFile {
                let unchecked = Unchecked(state: self)
                if let buffer = try await NIOThreadPool.singleton.runIfActive({ try unchecked.state.nextBufferReadingFiles() }) { return buffer }
                guard !isFinished else { return nil }
            }
            return try await nextBuffer()
        }

        /// The state handed to another thread (NIO's pool, a task) while its owner awaits the result.
        struct Unchecked: @unchecked Sendable {
            let state: IteratorState
        }

        /// Reads the next buffer off `eventLoop` (from the disk on NIO's thread pool, or a
        /// stream's bytes in a task), then calls `body` with it on `eventLoop`: for a body
        /// pump that runs on the loop and found nothing ``nextBufferWithoutBlocking()`` could
        /// read. Call it on `eventLoop`; the state is not touched by its owner until `body`
        /// runs (``isReadingOffLoop`` says so meanwhile).
        func nextBufferOffLoop(then eventLoop: any EventLoop, _ body: @escaping @Sendable (Result<ByteBuffer?, any Error>) -> Void) {
            let unchecked = Unchecked(state: self)
            offLoopRead = Task {
                let result: Result<ByteBuffer?, any Error>
                do {
                    result = .success(try await unchecked.state.nextBufferFromDiskOrStream())
                } catch {
                    result = .failure(error)
                }
                eventLoop.execute {
                    unchecked.state.offLoopRead = nil
                    body(result)
                }
            }
        }

        /// Whether ``nextBufferOffLoop(then:_:)`` is reading; on the pump's event loop.
        var isReadingOffLoop: Bool { offLoopRead != nil }

        /// Cancels the read ``nextBufferOffLoop(then:_:)`` has under way, for a pump that
        /// ended: a stream waiting for its next bytes stops being iterated — if it heeds
        /// cancellation (`AsyncStream` does); one that ignores it keeps the task, and the
        /// pump, until it yields. On the pump's event loop.
        func cancelOffLoopRead() {
            offLoopRead?.cancel()
        }

        /// The next buffer read without blocking the thread (file bytes only from the page
        /// cache), or nil where nothing can be read so: at the end (``isFinished``), or where
        /// the next bytes must come from the disk or a stream (then call ``nextBuffer()``).
        func nextBufferWithoutBlocking() throws -> ByteBuffer? {
            guard !reader.isFinished else { return nil }
            var buffer = takeBuffer()
            defer { recycled.append(buffer) }
            let reader = self.reader
            return try fill(&buffer, with: { try reader.readCachedWithoutSuspending(into: $0) }) > 0 ? buffer : nil
        }

        /// The next buffer read without suspending — file reads may block the thread, so call
        /// it on a thread that may block — or nil at the end or where the next bytes must be
        /// awaited from a stream (then call ``nextBuffer()``).
        func nextBufferReadingFiles() throws -> ByteBuffer? {
            guard !reader.isFinished else { return nil }
            var buffer = takeBuffer()
            defer { recycled.append(buffer) }
            let reader = self.reader
            return try fill(&buffer, with: { try reader.readWithoutSuspending(into: $0) }) > 0 ? buffer : nil
        }

        /// Whether the whole body has been read.
        var isFinished: Bool { reader.isFinished }

        /// The oldest recycled buffer, emptied (reusing its memory if no one else holds it), or a new one.
        private func takeBuffer() -> ByteBuffer {
            var buffer = recycled.count == Self.recycledCount ? recycled.removeFirst() : allocator.buffer(capacity: chunkSize)
            buffer.clear()
            return buffer
        }

        private func fill(_ buffer: inout ByteBuffer, with read: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> Int {
            let size = chunkSize
            return try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { memory in
                try read(UnsafeMutableRawBufferPointer(rebasing: memory[0..<size]))
            }
        }

        /// Sleeps until sending `sent` bytes at `rate` bytes per second would be due.
        func pace(sent: Int64, rate: Int64) async throws {
            let due = Double(sent) / Double(rate)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            if due > elapsed { try await Task.sleep(nanoseconds: UInt64((due - elapsed) * 1e9)) }
        }
    }
}
