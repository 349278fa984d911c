import Multipart
import NIOCore

/// Reads a body once for a ``FormParts`` sequence and the bodies of its parts: it pulls
/// buffers only as the caller asks for more, and skips what a caller left of a part when
/// asked for the next one.
final class FormPartReader<Body: AsyncSequence>: FormPartContentSource where Body.Element == ByteBuffer {
    private var source: Body.AsyncIterator
    private var parser: ByteBufferMultipartParser
    private var events: [MultipartBufferEvent] = []
    private var index = 0
    private var sourceEnded = false
    /// The number of the part begun last (the first is 1).
    private var partNumber = 0
    private var inPart = false

    init(source: Body.AsyncIterator, parser: MultipartParser) {
        self.source = source
        self.parser = ByteBufferMultipartParser(parser)
    }

    /// The next event, pulling buffers as needed; nil once the form is complete.
    ///
    /// - Throws: the parser's errors (a body that ends before its closing delimiter among
    ///   them) and the source's.
    private func nextEvent() async throws -> MultipartBufferEvent? {
        while index == events.count {
            if parser.isComplete || sourceEnded {
                try parser.finish()
                return nil
            }
            events.removeAll(keepingCapacity: true)
            index = 0
            if let buffer = try await source.next() {
                events = try parser.parse(buffer)
            } else {
                sourceEnded = true
            }
        }
        index += 1
        return events[index - 1]
    }

    /// The head and number of the next part, after skipping what is left of the current
    /// one; nil after the last.
    func nextPart() async throws -> (head: PartHead, number: Int)? {
        while let event = try await nextEvent() {
            switch event {
            case .partBegin(let head):
                partNumber += 1
                inPart = true
                return (head, partNumber)
            case .body, .partEnd, .end:
                inPart = false
            }
        }
        return nil
    }

    func nextContent(ofPart part: Int) async throws -> ByteBuffer? {
        guard part == partNumber, inPart else { return nil }
        while let event = try await nextEvent() {
            if case .body(let buffer) = event { return buffer }
            inPart = false
            return nil
        }
        return nil
    }
}
