extension BodyPlan {
    /// The bytes `range` of the body, as a plan of its own: what a resumed upload sends
    /// after the server has the bytes before `range`. File parts start reading at their
    /// place in `range` (nothing before it is read), in-memory bytes are cut, and each
    /// file is still checked to be the one planned, with its size.
    ///
    /// - Throws: ``MultipartError/streamNotResumable(part:)`` when the range would cut a
    ///   stream part, or begins after one of unknown length (a stream cannot skip bytes).
    /// - Precondition: `range` lies within the body (``contentLength``).
    public func slice(_ range: Range<Int64>) throws -> BodyPlan {
        var sliced: [BodySegment] = []
        var start: Int64 = 0
        for segment in segments {
            guard start < range.upperBound else { break }
            guard let length = segment.length else {
                if case .stream(let stream) = segment { throw MultipartError.streamNotResumable(part: stream.part) }
                break
            }
            let end = start + length
            defer { start = end }
            let skip = max(range.lowerBound - start, 0)
            let take = min(end, range.upperBound) - start - skip
            guard take > 0 else { continue }
            switch segment {
            case .bytes(let bytes):
                sliced.append(.bytes(Array(bytes[Int(skip)..<Int(skip + take)])))
            case .file(let region):
                sliced.append(.file(region.sliced(skip: skip, take: take)))
            case .stream(let stream):
                // Whole, it can be produced again; in part, it cannot.
                guard skip == 0, take == length else { throw MultipartError.streamNotResumable(part: stream.part) }
                sliced.append(segment)
            }
        }
        return BodyPlan(boundary: boundary, segments: sliced)
    }
}
