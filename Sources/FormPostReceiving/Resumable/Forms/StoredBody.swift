#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Stored bytes as a sequence of `ByteBuffer`s read on NIO's thread pool, as a request's
/// body would arrive: ranges of files, one after the other — a resumable form's bytes put
/// together again from its ``FormSegments``.
struct StoredBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Bytes of a file: `length` of them from `offset` (fewer when the file ends before).
    struct Extent: Sendable {
        var path: String
        var offset: Int64
        var length: Int64
    }

    let extents: [Extent]
    let threadPool: NIOThreadPool
    /// The size of each buffer.
    let chunkSize: Int

    init(extents: [Extent], threadPool: NIOThreadPool, chunkSize: Int = 256 << 10) {
        self.extents = extents
        self.threadPool = threadPool
        self.chunkSize = chunkSize
    }

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    /// Reads the extents in order; each file is closed at its extent's end, or when the iterator goes.
    struct Iterator: AsyncIteratorProtocol {
        private let body: StoredBody
        private var index = 0
        private var file: OpenDescriptor?
        private var read: Int64 = 0

        init(body: StoredBody) {
            self.body = body
        }

        mutating func next() async throws -> ByteBuffer? {
            while index < body.extents.count {
                let extent = body.extents[index]
                let count = Int(Swift.min(Int64(body.chunkSize), extent.length - read))
                if count > 0 {
                    if file == nil {
                        let path = extent.path
                        file = try await body.threadPool.runIfActive { try OpenDescriptor(path: path) }
                    }
                    let (open, at) = (file!, extent.offset + read)
                    let buffer = try await body.threadPool.runIfActive { try open.read(at: at, count: count) }
                    if buffer.readableBytes > 0 {
                        read += Int64(buffer.readableBytes)
                        return buffer
                    }
                }
                index += 1
                file = nil
                read = 0
            }
            return nil
        }
    }

    /// A descriptor open for reading, closed when the last reference goes.
    final class OpenDescriptor: Sendable {
        let descriptor: Int32

        init(path: String) throws {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot read an upload", errno: errno) }
        }

        deinit { close(descriptor) }

        /// Up to `count` bytes at `offset` (fewer at the end of the file, none past it).
        func read(at offset: Int64, count: Int) throws -> ByteBuffer {
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            while true {
                var got = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                    got = pread(descriptor, pointer.baseAddress, count, off_t(offset))
                    return Swift.max(got, 0)
                }
                if got >= 0 { return buffer }
                guard errno == EINTR else { throw ReceiverFailure.storing("reading an upload failed", errno: errno) }
            }
        }
    }
}
