import Multipart
import NIOCore

/// What a ``FormStreamSplitter`` found in the bytes of a form, in their order: every byte
/// it classified belongs to exactly one ``bytes(at:_:isContent:)`` piece, so the pieces
/// laid end to end are the form's bytes.
enum FormStreamPiece {
    /// A part begins (its header block is among the bytes before).
    case partBegin(PartHead)
    /// Bytes at a position of the form: the current part's content (`isContent`), or
    /// anything else — preamble, delimiters, header blocks, epilogue.
    case bytes(at: Int64, ByteBuffer, isContent: Bool)
    /// The current part's content is complete.
    case partEnd
    /// The closing delimiter was read.
    case end
}
