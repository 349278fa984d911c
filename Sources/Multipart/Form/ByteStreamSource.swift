/// Where a stream part's bytes come from: a factory of async sequences, or a one-shot
/// source such as MultipartFoundation's `InputStream`. Each call to ``makeIterator(part:)``
/// starts the content over.
package struct ByteStreamSource: Sendable {
    let length: Int64?
    private let factory: @Sendable (PartLabel) throws -> any ByteChunkIterator

    init<S: AsyncSequence & Sendable>(length: Int64?, _ makeStream: @escaping @Sendable () -> S) where S.Element == [UInt8] {
        self.length = length
        self.factory = { _ in AsyncSequenceChunkIterator(makeStream().makeAsyncIterator()) }
    }

    /// A source whose iterators `factory` makes (it may refuse a second one).
    package init(length: Int64?, factory: @escaping @Sendable (PartLabel) throws -> any ByteChunkIterator) {
        self.length = length
        self.factory = factory
    }

    func makeIterator(part: PartLabel) throws -> any ByteChunkIterator {
        try factory(part)
    }
}

/// Yields a stream part's content chunk by chunk; nil at the end.
package protocol ByteChunkIterator: AnyObject {
    /// The next chunk of `part`'s content, or nil at its end.
    func next(part: PartLabel) async throws -> [UInt8]?
}

final class AsyncSequenceChunkIterator<Base: AsyncIteratorProtocol>: ByteChunkIterator where Base.Element == [UInt8] {
    private var base: Base

    init(_ base: Base) { self.base = base }

    func next(part: PartLabel) async throws -> [UInt8]? {
        do {
            return try await base.next()
        } catch let error as MultipartError {
            throw error
        } catch {
            throw MultipartError.streamFailed(part: part, reason: String(describing: error))
        }
    }
}
