import Multipart
import NIOCore

/// Splits the bytes of a form, fed in any pieces, into parts' content and everything
/// else, each with its position in the form — so that a receiver can write a file part's
/// content straight to its own file and the rest aside, and knows at each moment how many
/// of the form's first bytes it has classified.
///
/// The parser holds back a few bytes that may begin a delimiter (or a header block being
/// collected): they are classified once the bytes after them arrive. ``classified`` is
/// where the pieces handed out so far end; ``fed`` counts every byte taken. No I/O.
struct FormStreamSplitter {
    private var parser: MultipartParser
    /// The bytes fed and not yet classified: the last ``fed`` − ``classified`` of the form.
    private var held = ByteBuffer()
    /// How many of the form's bytes were fed.
    private(set) var fed: Int64 = 0

    init(_ parser: MultipartParser) {
        self.parser = parser
    }

    /// How many of the form's first bytes the pieces handed out cover.
    var classified: Int64 { fed - Int64(held.readableBytes) }

    /// Whether the closing delimiter has been read.
    var isComplete: Bool { parser.isComplete }

    /// The pieces that the form's next bytes, `input`, complete: the bytes held back
    /// before and those of `input` that are now classified, in order.
    ///
    /// - Throws: `MultipartError` when the form is malformed or past a limit.
    mutating func feed(_ input: ByteBuffer) throws -> [FormStreamPiece] {
        let inputStart = fed
        let start = classified
        var found: [(piece: FoundPiece, range: Range<Int64>?)] = []
        try input.withUnsafeReadableBytes { bytes in
            try parser.parse(bytes) { event in
                switch event {
                case .partBegin(let head):
                    found.append((.partBegin(head), nil))
                case .body(let content):
                    // Content the parser held back is its own copy: it begins where the
                    // bytes still unclassified before this input did.
                    let lower = event.contentRange(in: bytes).map { inputStart + Int64($0.lowerBound) } ?? start
                    found.append((.content, lower..<(lower + Int64(content.count))))
                case .partEnd:
                    found.append((.partEnd, nil))
                case .end:
                    found.append((.end, nil))
                }
            }
        }
        fed += Int64(input.readableBytes)
        let window = Window(held: held, input: input, start: start, inputStart: inputStart)
        let end = fed - Int64(parser.isComplete ? 0 : parser.heldBytes)
        var pieces: [FormStreamPiece] = []
        var cursor = start
        func other(upTo position: Int64) {
            guard position > cursor else { return }
            pieces.append(.bytes(at: cursor, window.bytes(cursor..<position), isContent: false))
            cursor = position
        }
        for (piece, range) in found {
            switch piece {
            case .partBegin(let head): pieces.append(.partBegin(head))
            case .partEnd: pieces.append(.partEnd)
            case .end: pieces.append(.end)
            case .content:
                guard let range else { continue }
                other(upTo: range.lowerBound)
                pieces.append(.bytes(at: range.lowerBound, window.bytes(range), isContent: true))
                cursor = range.upperBound
            }
        }
        other(upTo: end)
        held = window.bytes(end..<fed)
        return pieces
    }

    /// How many of the bytes fed are held back, not yet classified.
    var heldCount: Int64 { Int64(held.readableBytes) }

    /// Counts `count` bytes of the form, before those held back, as fed and classified
    /// without feeding them: the content of file parts a parse made again from a form's
    /// `ID.data` alone left out (the parser saw those parts as empty). No bytes may be held
    /// back where they go.
    mutating func skip(_ count: Int64) {
        fed += count
    }

    /// Declares the end of the form.
    ///
    /// - Throws: `MultipartError/malformedBody(reason:)` when the closing delimiter was not read.
    mutating func finish() throws {
        try parser.finish()
    }

    /// An event found by the parser, before its bytes are taken out.
    private enum FoundPiece {
        case partBegin(PartHead)
        case content
        case partEnd
        case end
    }

    /// The bytes held back before an input and the input itself, addressed by their
    /// positions in the form: slices of the input where they lie in it, else copies.
    private struct Window {
        let held: ByteBuffer
        let input: ByteBuffer
        let start: Int64
        let inputStart: Int64

        func bytes(_ range: Range<Int64>) -> ByteBuffer {
            if range.lowerBound >= inputStart {
                return input.getSlice(at: input.readerIndex + Int(range.lowerBound - inputStart), length: range.count) ?? ByteBuffer()
            }
            var joined = ByteBuffer()
            joined.reserveCapacity(range.count)
            let heldEnd = min(range.upperBound, inputStart)
            if let before = held.getSlice(at: held.readerIndex + Int(range.lowerBound - start), length: Int(heldEnd - range.lowerBound)) {
                joined.writeImmutableBuffer(before)
            }
            if range.upperBound > inputStart, let after = input.getSlice(at: input.readerIndex, length: Int(range.upperBound - inputStart)) {
                joined.writeImmutableBuffer(after)
            }
            return joined
        }
    }
}
