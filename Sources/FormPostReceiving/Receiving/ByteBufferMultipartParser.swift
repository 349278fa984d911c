import Multipart
import NIOCore

/// A `MultipartParser` fed NIO buffers: each is parsed where it lies, and content comes
/// out as slices of it (a delimiter's first bytes held back at a buffer's end, when they
/// turn out to be content, are the only bytes copied).
struct ByteBufferMultipartParser {
    private var parser: MultipartParser

    init(_ parser: MultipartParser) {
        self.parser = parser
    }

    /// Whether the closing delimiter has been read.
    var isComplete: Bool { parser.isComplete }

    /// The events of the next buffer of the body.
    mutating func parse(_ buffer: ByteBuffer) throws -> [MultipartBufferEvent] {
        var events: [MultipartBufferEvent] = []
        try buffer.withUnsafeReadableBytes { input in
            try parser.parse(input) { event in
                switch event {
                case .partBegin(let head):
                    events.append(.partBegin(head))
                case .body(let content):
                    let slice = event.contentRange(in: input).flatMap { buffer.getSlice(at: buffer.readerIndex + $0.lowerBound, length: $0.count) }
                    events.append(.body(slice ?? ByteBuffer(bytes: content)))
                case .partEnd:
                    events.append(.partEnd)
                case .end:
                    events.append(.end)
                }
            }
        }
        return events
    }

    /// Declares the end of the body.
    ///
    /// - Throws: `MultipartError/malformedBody(reason:)` when the closing delimiter was not read.
    mutating func finish() throws {
        try parser.finish()
    }
}
