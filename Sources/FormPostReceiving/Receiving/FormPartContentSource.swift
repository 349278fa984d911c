import NIOCore

/// Where a ``FormPartBody`` takes its content from.
protocol FormPartContentSource: AnyObject {
    /// The next content of the part numbered `part`, or nil once that part has ended (or
    /// the reader has moved past it).
    func nextContent(ofPart part: Int) async throws -> ByteBuffer?
}
