import Foundation
import Synchronization

/// Where a stream part's bytes come from: a factory of async sequences, or a one-shot
/// Foundation `InputStream`. Each call to ``makeIterator(part:)`` starts the content over.
struct ByteStreamSource: Sendable {
    let length: Int64?
    private let factory: @Sendable (PartLabel) throws -> any ByteChunkIterator

    init<S: AsyncSequence & Sendable>(length: Int64?, _ makeStream: @escaping @Sendable () -> S) where S.Element == [UInt8] {
        self.length = length
        self.factory = { _ in AsyncSequenceChunkIterator(makeStream().makeAsyncIterator()) }
    }

    init(inputStream: InputStream, length: Int64) {
        self.length = length
        let box = OneShotInputStream(inputStream)
        self.factory = { part in try box.take(part: part) }
    }

    func makeIterator(part: PartLabel) throws -> any ByteChunkIterator {
        try factory(part)
    }
}

/// Yields a stream part's content chunk by chunk; nil at the end.
protocol ByteChunkIterator: AnyObject {
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

/// Hands out its `InputStream` once; a second request is an error.
final class OneShotInputStream: Sendable {
    private let stream: Mutex<InputStreamBox?>

    init(_ stream: InputStream) {
        self.stream = Mutex(InputStreamBox(stream))
    }

    func take(part: PartLabel) throws -> any ByteChunkIterator {
        let taken = stream.withLock { box -> InputStreamBox? in
            defer { box = nil }
            return box
        }
        guard let taken else { throw MultipartError.streamAlreadyConsumed(part: part) }
        return InputStreamChunkIterator(taken.stream)
    }
}

/// Carries a non-Sendable `InputStream` into the one task that reads it.
struct InputStreamBox: @unchecked Sendable {
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }
}

/// Reads an `InputStream` in 256 KiB chunks. Never calls `streamError`, which
/// swift-corelibs-foundation does not implement.
final class InputStreamChunkIterator: ByteChunkIterator {
    private let stream: InputStream
    private var opened = false

    init(_ stream: InputStream) { self.stream = stream }

    func next(part: PartLabel) async throws -> [UInt8]? {
        if !opened {
            opened = true
            if stream.streamStatus == .notOpen { stream.open() }
        }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBufferPointer { buffer in
            stream.read(buffer.baseAddress!, maxLength: buffer.count)
        }
        if count < 0 {
            stream.close()
            throw MultipartError.streamFailed(part: part, reason: "the input stream reported a read error")
        }
        if count == 0 {
            stream.close()
            return nil
        }
        chunk.removeSubrange(count...)
        return chunk
    }
}
