import NIOCore

/// A request's body as the receivers read it: buffers as they arrive, from whichever HTTP
/// server took the request (Hummingbird's `RequestBody`, Vapor's `Request.Body`, or any
/// `AsyncSequence` of `ByteBuffer`). It is read once; the server's own backpressure holds.
public struct ReceiverRequestBody: AsyncSequence, Sendable {
    /// The body arrives as `ByteBuffer`s.
    public typealias Element = ByteBuffer

    private let makeIterator: @Sendable () -> Iterator

    /// A body that reads `base`.
    public init<Base: AsyncSequence & Sendable>(_ base: Base) where Base.Element == ByteBuffer {
        makeIterator = { Iterator(base.makeAsyncIterator()) }
    }

    /// A body of `buffer`, or empty.
    public init(buffer: ByteBuffer? = nil) {
        self.init(BufferSequence(buffer: buffer))
    }

    /// Begins reading the body.
    public func makeAsyncIterator() -> Iterator {
        makeIterator()
    }

    /// Reads the body's buffers in order.
    public struct Iterator: AsyncIteratorProtocol {
        private let source: any BufferSource

        init<Base: AsyncIteratorProtocol>(_ base: Base) where Base.Element == ByteBuffer {
            source = IteratorSource(base)
        }

        /// The next buffer, or nil at the end of the body.
        public mutating func next() async throws -> ByteBuffer? {
            try await source.next()
        }
    }
}

/// What an ``ReceiverRequestBody/Iterator`` reads from: one iterator of another sequence,
/// boxed so that the body's type names no server's.
private protocol BufferSource: AnyObject {
    func next() async throws -> ByteBuffer?
}

private final class IteratorSource<Base: AsyncIteratorProtocol>: BufferSource where Base.Element == ByteBuffer {
    private var base: Base

    init(_ base: Base) {
        self.base = base
    }

    func next() async throws -> ByteBuffer? {
        try await base.next()
    }
}

/// The buffer of a body that is known whole, once.
private struct BufferSequence: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let buffer: ByteBuffer?

    func makeAsyncIterator() -> Iterator {
        Iterator(buffer: buffer)
    }

    struct Iterator: AsyncIteratorProtocol {
        var buffer: ByteBuffer?

        mutating func next() async throws -> ByteBuffer? {
            defer { buffer = nil }
            return buffer.flatMap { $0.readableBytes > 0 ? $0 : nil }
        }
    }
}
