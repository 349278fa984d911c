import Multipart
import NIOCore

/// The parts of a `multipart/form-data` body, one at a time, each with its headers and its
/// content as a stream of buffers — for a handler that sends parts elsewhere (object
/// storage, a database) without touching the disk:
///
///     router.post("/import") { request, context in
///         for try await part in try request.formParts() {
///             if part.filename != nil {
///                 for try await buffer in part.body { try await store.append(buffer) }
///             } else {
///                 let value = try await part.body.collect(upTo: 64 * 1024)
///             }
///         }
///         return HTTPResponse.Status.ok
///     }
///
/// The body is read once, as the loop asks for more: memory holds the buffer being read
/// and a header block at most. A part's content must be read before the next part is
/// asked for; what is left of it is skipped. The parser is `MultipartParser`, with its
/// limits; a body that ends before its closing delimiter throws at the end of the loop.
/// Content buffers are slices of the buffers received, not copies.
public struct FormParts<Body: AsyncSequence>: AsyncSequence where Body.Element == ByteBuffer {
    /// A part: its headers and its content.
    public typealias Element = FormPart

    private let body: Body
    private let parser: MultipartParser

    /// The parts of `body`, a body of type `contentType` (`multipart/…; boundary=…`).
    ///
    /// - Throws: `MultipartError/missingBoundary(contentType:)`.
    public init(contentType: String, body: Body, limits: MultipartParserLimits = MultipartParserLimits()) throws {
        self.body = body
        self.parser = try MultipartParser(contentType: contentType, limits: limits)
    }

    /// Starts reading the body.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: FormPartReader(source: body.makeAsyncIterator(), parser: parser))
    }

    /// Reads the parts of a body.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let reader: FormPartReader<Body>

        /// The next part, after what is left of the previous one; nil after the last.
        ///
        /// - Throws: `MultipartError` for a malformed body or a limit crossed, or the body's own error.
        public mutating func next() async throws -> FormPart? {
            guard let (head, number) = try await reader.nextPart() else { return nil }
            return FormPart(head: head, body: FormPartBody(source: reader, part: number))
        }
    }
}
