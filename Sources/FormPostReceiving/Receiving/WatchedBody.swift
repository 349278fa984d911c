import NIOCore

/// A request body that hands each buffer, before yielding it, to ``watch`` with the buffer's
/// byte count and the count of all bytes read so far (that buffer's included). What
/// ``watch`` throws ends the body there: the buffer is never handed on. It serves the
/// metrics' byte count (``ReceiverMetrics/received(_:)``) and a signed URL's byte limit
/// (413 once past it, so nothing past the limit is stored).
struct WatchedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer

    let base: Base
    let watch: @Sendable (_ bytes: Int, _ total: Int64) throws -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let watch: @Sendable (Int, Int64) throws -> Void
        var total: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            total += Int64(buffer.readableBytes)
            try watch(buffer.readableBytes, total)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), watch: watch)
    }
}
