#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A form's body as a list of segments, with its exact length known before a byte is produced.
///
/// A plan is an immutable value: every encoder realises the same segments, so they agree
/// byte for byte, and the body can be produced again at any time (retries, redirects,
/// URLSession's `needNewBodyStream`) — except for a one-shot `InputStream` part.
public struct BodyPlan: Sendable {
    /// The boundary the body is framed with.
    public let boundary: Boundary
    /// The body's segments, in order. Adjacent in-memory bytes are merged.
    public let segments: [BodySegment]

    /// The request's `Content-Type`: `multipart/form-data; boundary=…`.
    public var contentType: String { boundary.contentType }

    /// The exact byte count of the body, or nil when a stream part has no declared length.
    public var contentLength: Int64? {
        var total = Int64(0)
        for segment in segments {
            guard let length = segment.length else { return nil }
            total += length
        }
        return total
    }

    /// Creates a plan made of `segments` framed by `boundary`. Used by ``MultipartForm/plan()``;
    /// a raw (non-multipart) body is a plan of one segment.
    public init(boundary: Boundary, segments: [BodySegment]) {
        self.boundary = boundary
        self.segments = segments
    }

    init(form: MultipartForm) throws {
        let boundary = form.boundary
        let checksContent = !boundary.isRandom
        // `CRLF--boundary`: without its CRLF it opens the body's first line.
        let delimiter = boundary.delimiter
        var segments: [BodySegment] = []
        var pending: [UInt8] = []
        func flush() {
            if !pending.isEmpty { segments.append(.bytes(pending)) }
            pending = []
        }
        for (index, part) in form.parts.enumerated() {
            let label = PartLabel(position: index + 1, name: part.name)
            pending += index == 0 ? delimiter.dropFirst(2) : delimiter[...]
            pending += [0x0D, 0x0A]
            pending += part.headerBlock
            switch part.body.storage {
            case .bytes(let bytes):
                if MultipartForm.contains(bytes, delimiter: delimiter) {
                    throw MultipartError.boundaryInContent(part: label, boundary: boundary.value)
                }
                if bytes.count <= Self.mergeLimit {
                    pending += bytes
                } else {
                    flush()
                    segments.append(.bytes(bytes))
                }
            case .file(let file):
                flush()
                segments.append(.file(FileSlice(path: file.path, offset: 0, length: file.size, part: label, needsContentCheck: checksContent, identity: file.identity, fileSize: file.size)))
            case .stream(let source):
                flush()
                segments.append(.stream(StreamSegment(length: source.length, part: label, needsContentCheck: checksContent, source: source)))
            }
        }
        pending += form.parts.isEmpty ? delimiter.dropFirst(2) : delimiter[...]
        pending += [0x2D, 0x2D, 0x0D, 0x0A]
        flush()
        self.init(boundary: boundary, segments: segments)
    }

    /// In-memory content up to this size is merged with the surrounding header bytes.
    static let mergeLimit = 64 * 1024

    /// A reader that produces the body in chunks, from the start. Each call starts over.
    ///
    /// - Parameter chunkSize: the size of the chunks ``BodyChunkReader/next()`` returns;
    ///   memory stays bounded by it whatever the parts weigh.
    public func makeChunkReader(chunkSize: Int = 1 << 20) -> BodyChunkReader {
        BodyChunkReader(plan: self, chunkSize: chunkSize)
    }
}
