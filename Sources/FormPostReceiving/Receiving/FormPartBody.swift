import Multipart
import NIOCore

/// The content of one ``FormPart``: buffers that share storage with those received. It
/// ends at the part's end, or at once when the sequence of parts has moved past the part.
public struct FormPartBody: AsyncSequence {
    /// A piece of the content.
    public typealias Element = ByteBuffer

    let source: any FormPartContentSource
    let part: Int

    /// Starts reading the content.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source, part: part)
    }

    /// Reads the content of a part.
    public struct Iterator: AsyncIteratorProtocol {
        let source: any FormPartContentSource
        let part: Int

        /// The next piece of content; nil at the part's end.
        ///
        /// - Throws: `MultipartError` for a malformed body or a limit crossed, or the body's own error.
        public mutating func next() async throws -> ByteBuffer? {
            try await source.nextContent(ofPart: part)
        }
    }

    /// The whole content in one buffer (for a text field, say).
    ///
    /// - Throws: `MultipartError/limitExceeded(limit:value:)` (`maxPartBytes`) when it holds more
    ///   than `maxBytes`, and the errors of reading.
    public func collect(upTo maxBytes: Int) async throws -> ByteBuffer {
        var collected = ByteBuffer()
        for try await buffer in self {
            guard collected.readableBytes + buffer.readableBytes <= maxBytes else {
                throw MultipartError.limitExceeded(limit: .maxPartBytes, value: Int64(maxBytes))
            }
            var buffer = buffer
            collected.writeBuffer(&buffer)
        }
        return collected
    }
}
