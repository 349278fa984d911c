import CMultipartSystem

/// Substring search over bytes, backed by the C library's `memmem`.
enum ByteSearch {
    /// The offset of the first occurrence of `needle` in `haystack`, or nil.
    static func firstIndex(of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Int? {
        guard needle.count > 0, haystack.count >= needle.count else { return nil }
        guard let found = cmultipart_memmem(haystack.baseAddress!, haystack.count, needle.baseAddress!, needle.count) else { return nil }
        return UnsafeRawPointer(found) - haystack.baseAddress!
    }

    /// Whether `content`, as a part's content (preceded by the CRLF that ends its header
    /// block), contains `delimiter` (`CRLF--boundary`).
    static func containsDelimiter(_ content: [UInt8], delimiter: [UInt8]) -> Bool {
        let crlf: [UInt8] = [0x0D, 0x0A]
        // A match that begins in the CRLF before the content: its last `inPrefix` bytes.
        for inPrefix in 1...2 where delimiter.count > inPrefix {
            if crlf.suffix(inPrefix).elementsEqual(delimiter.prefix(inPrefix)), content.starts(with: delimiter.dropFirst(inPrefix)) { return true }
        }
        return delimiter.withUnsafeBytes { needle in content.withUnsafeBytes { firstIndex(of: needle, in: $0) != nil } }
    }
}

/// Finds a delimiter in content produced piece by piece: it keeps the last bytes of the
/// previous piece so that a delimiter split across pieces is found too. It starts as if
/// the CRLF ending the header block came just before the content.
struct DelimiterScanner {
    private let delimiter: [UInt8]
    private var tail: [UInt8] = [0x0D, 0x0A]

    init(delimiter: [UInt8]) {
        self.delimiter = delimiter
    }

    /// Scans the next piece of content; true when the delimiter has appeared.
    mutating func scan(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard piece.count > 0 else { return false }
        let keep = delimiter.count - 1
        let head = Array(UnsafeRawBufferPointer(rebasing: piece[0..<min(piece.count, keep)]))
        let seam = tail + head
        let found = delimiter.withUnsafeBytes { needle in
            seam.withUnsafeBytes { ByteSearch.firstIndex(of: needle, in: $0) != nil }
                || ByteSearch.firstIndex(of: needle, in: piece) != nil
        }
        if piece.count >= keep {
            tail = Array(UnsafeRawBufferPointer(rebasing: piece[(piece.count - keep)...]))
        } else {
            tail = Array((tail + Array(piece)).suffix(keep))
        }
        return found
    }
}
