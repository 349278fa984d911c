import NIOCore

/// A request body that throws ``ReceiverFailure/limitExceeded(_:value:)`` (413) once it has
/// yielded more than `limit` bytes: the buffer that crosses it is never handed on, so
/// nothing past the limit is stored.
struct ByteLimitedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer

    let base: Base
    let limit: Int64
    let crossed: ReceiverLimit

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limit: Int64
        let crossed: ReceiverLimit
        var read: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            read += Int64(buffer.readableBytes)
            guard read <= limit else { throw ReceiverFailure.limitExceeded(crossed, value: limit) }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), limit: limit, crossed: crossed)
    }
}
