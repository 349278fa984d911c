#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// The bytes of a file as a sequence of `ByteBuffer`s read on NIO's thread pool: a
/// completed resumable upload's representation, read as a request's body would arrive.
struct StoredBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let path: String
    let threadPool: NIOThreadPool
    /// The size of each buffer.
    let chunkSize: Int

    init(path: String, threadPool: NIOThreadPool, chunkSize: Int = 256 << 10) {
        self.path = path
        self.threadPool = threadPool
        self.chunkSize = chunkSize
    }

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    /// Reads the file from its start; the file is closed at its end, or when the iterator goes.
    struct Iterator: AsyncIteratorProtocol {
        private let body: StoredBody
        private var file: OpenDescriptor?
        private var offset: Int64 = 0

        init(body: StoredBody) {
            self.body = body
        }

        mutating func next() async throws -> ByteBuffer? {
            if file == nil {
                let path = body.path
                file = try await body.threadPool.runIfActive { try OpenDescriptor(path: path) }
            }
            guard let file else { return nil }
            let (at, size) = (offset, body.chunkSize)
            let buffer = try await body.threadPool.runIfActive { try file.read(at: at, count: size) }
            guard buffer.readableBytes > 0 else {
                self.file = nil
                return nil
            }
            offset += Int64(buffer.readableBytes)
            return buffer
        }
    }

    /// A descriptor open for reading, closed when the last reference goes.
    final class OpenDescriptor: Sendable {
        let descriptor: Int32

        init(path: String) throws {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot read a completed upload", errno: errno) }
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
                guard errno == EINTR else { throw ReceiverFailure.storing("reading a completed upload failed", errno: errno) }
            }
        }
    }
}
