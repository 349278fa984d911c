/// What ``MultipartParser/parse(_:_:)`` found next in the bytes it was given. Content is a
/// view of those bytes, valid only while the handler that receives it runs: copy or write
/// it there, or keep an owner of the storage (a NIO receiver takes a slice of its buffer).
public enum BorrowedMultipartEvent {
    /// A part begins; its headers are complete.
    case partBegin(PartHead)
    /// Bytes of the current part's content, borrowed for the handler's call only.
    case body(UnsafeRawBufferPointer)
    /// The current part's content is complete.
    case partEnd
    /// The closing delimiter was read: the form is complete.
    case end
}

extension BorrowedMultipartEvent {
    /// Where the content of a `.body` event lies in `input` (the bytes given to
    /// ``MultipartParser/parse(_:_:)``), so that a caller who owns `input` can keep a slice
    /// of it instead of a copy; nil for other events and for the few bytes a previous call
    /// held back (they are the parser's own).
    public func contentRange(in input: UnsafeRawBufferPointer) -> Range<Int>? {
        guard case .body(let content) = self, let base = input.baseAddress, let start = content.baseAddress,
              start >= base, start < base + input.count else { return nil }
        let offset = start - base
        return offset..<(offset + content.count)
    }
}
