/// A strict, bounded, incremental parser of `multipart/form-data` bodies. It performs no I/O.
///
/// Feed the body in chunks of any size with ``append(_:)``, take events with ``next()``
/// until it returns nil (it needs more input), and call ``finish()`` when the input ends:
///
///     var parser = try MultipartParser(contentType: request.contentType)
///     for try await chunk in body {
///         parser.append(chunk)
///         while let event = try parser.next() { handle(event) }
///     }
///     try parser.finish()   // throws if the closing delimiter never came
///
/// It accepts a preamble and an epilogue, transport padding after a delimiter, browser
/// escapes in names and `filename*`; obsolete header folding is unfolded. A part without
/// `Content-Disposition: form-data; name=…`, malformed headers, and a body without its
/// closing delimiter are errors. Memory is bounded by the header limit and the chunks fed.
public struct MultipartParser {
    private enum State {
        case preamble
        case afterDelimiter
        case headers
        case body
        case epilogue
    }

    /// The boundary, without the leading `--`.
    public let boundary: String
    /// The limits in force.
    public let limits: MultipartParserLimits

    private let delimiter: [UInt8]
    private var state = State.preamble
    private var chunk: [UInt8] = []
    private var position = 0
    /// Bytes held back at a chunk's end in the preamble or a body: a possible delimiter start.
    /// It begins as the CRLF that conceptually precedes a delimiter at the body's very start.
    private var carry: [UInt8] = [0x0D, 0x0A]
    private var lineBytes: [UInt8] = []
    private var pending: [MultipartEvent] = []
    private var pendingIndex = 0
    private var partCount = 0
    private var partBytes: Int64 = 0
    private var totalBytes: Int64 = 0
    private var failed: MultipartError?

    /// Creates a parser for bodies framed by `boundary` (without the leading `--`).
    ///
    /// RFC 2046 allows 70 characters; up to 200 are accepted from lenient senders.
    ///
    /// - Throws: ``MultipartError/invalidBoundary(_:reason:)`` for an empty or over-long boundary.
    public init(boundary: String, limits: MultipartParserLimits = MultipartParserLimits()) throws {
        guard !boundary.isEmpty, boundary.utf8.count <= 200 else {
            throw MultipartError.invalidBoundary(boundary, reason: "a boundary must have 1 to 200 characters here (RFC 2046 allows 70)")
        }
        self.boundary = boundary
        self.limits = limits
        self.delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Creates a parser for a request whose `Content-Type` is `contentType`
    /// (`multipart/…; boundary=…`, the parameter quoted or bare, in any case).
    ///
    /// - Throws: ``MultipartError/missingBoundary(contentType:)``.
    public init(contentType: String, limits: MultipartParserLimits = MultipartParserLimits()) throws {
        guard let boundary = Self.boundary(fromContentType: contentType) else {
            throw MultipartError.missingBoundary(contentType: contentType)
        }
        try self.init(boundary: boundary, limits: limits)
    }

    /// The boundary parameter of a `multipart/*` content type, or nil.
    public static func boundary(fromContentType contentType: String) -> String? {
        var scanner = ParameterScanner(Array(contentType.utf8))
        guard scanner.token().lowercased().hasPrefix("multipart/") else { return nil }
        while let (key, value, _) = scanner.parameter() {
            if key.lowercased() == "boundary", !value.isEmpty { return value }
        }
        return nil
    }

    /// The longest line accepted after a delimiter: transport padding of at most 256
    /// spaces or tabs, then CRLF.
    static let maxLineAfterDelimiter = 258

    /// The bytes the parser holds besides the input not yet read: the tail of a chunk that
    /// may begin a delimiter, the line after a delimiter, or a header block being collected.
    /// Whatever the input, it never exceeds ``heldBytesBound``.
    package var heldBytes: Int { carry.count + lineBytes.count }

    /// The most bytes the parser ever holds besides unread input: a header block at its
    /// limit (or the line after a delimiter, if longer) plus a partial delimiter.
    package var heldBytesBound: Int { max(limits.maxHeaderBytes + 4, Self.maxLineAfterDelimiter) + delimiter.count }

    /// Whether the closing delimiter has been read.
    public var isComplete: Bool {
        if case .epilogue = state { return true }
        return false
    }

    /// Hands the parser the body's next bytes. Take the events they produce with ``next()``
    /// before appending more.
    public mutating func append(_ bytes: [UInt8]) {
        totalBytes += Int64(bytes.count)
        if position < chunk.count {
            chunk = Array(chunk[position...]) + bytes
        } else {
            chunk = bytes
        }
        position = 0
    }

    /// The next event, or nil when more input is needed (or the form is complete).
    ///
    /// - Throws: ``MultipartError/malformedBody(reason:)`` or ``MultipartError/limitExceeded(limit:value:)``;
    ///   after an error, every call throws it again.
    public mutating func next() throws -> MultipartEvent? {
        if let failed { throw failed }
        do {
            while pendingIndex == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingIndex = 0
                guard position < chunk.count else { return nil }
                try step()
            }
            let event = pending[pendingIndex]
            pendingIndex += 1
            return event
        } catch let error as MultipartError {
            failed = error
            throw error
        }
    }

    /// Declares the end of the input.
    ///
    /// - Throws: ``MultipartError/malformedBody(reason:)`` when the closing delimiter was not read.
    public mutating func finish() throws {
        if let failed { throw failed }
        guard isComplete else {
            let error = MultipartError.malformedBody(reason: "it ended before the closing delimiter \"--\(boundary)--\"")
            failed = error
            throw error
        }
    }

    // MARK: - The machine

    private mutating func step() throws {
        if let max = limits.maxTotalBytes, totalBytes > max {
            throw MultipartError.limitExceeded(limit: .maxTotalBytes, value: max)
        }
        switch state {
        case .preamble:
            scanContent(emit: false)
            if state == .preamble, totalBytes - Int64(carry.count) > Int64(limits.maxPreambleBytes) {
                throw MultipartError.malformedBody(
                    reason: "no delimiter \"--\(boundary)\" in its first \(limits.maxPreambleBytes) bytes: it is not a form with that boundary")
            }
        case .body: try scanContentChecked()
        case .afterDelimiter: try readAfterDelimiter()
        case .headers: try readHeaders()
        case .epilogue: position = chunk.count
        }
    }

    private mutating func scanContentChecked() throws {
        scanContent(emit: true)
        if let max = limits.maxPartBytes, partBytes > max {
            throw MultipartError.limitExceeded(limit: .maxPartBytes, value: max)
        }
    }

    /// Scans preamble or body content for the delimiter, emitting body bytes when `emit`.
    private mutating func scanContent(emit: Bool) {
        let length = delimiter.count
        if !carry.isEmpty {
            let take = min(length - 1, chunk.count - position)
            let joint = carry + chunk[position..<(position + take)]
            if let found = Self.find(delimiter, in: joint[...]) {
                emitContent(joint[0..<found], emit: emit)
                position += found + length - carry.count
                carry = []
                delimiterFound()
                return
            }
            if take == length - 1 {
                emitContent(carry[...], emit: emit)
                carry = []
            } else {
                let hold = Self.holdBackStart(delimiter, in: joint[...])
                emitContent(joint[0..<hold], emit: emit)
                carry = Array(joint[hold...])
                position += take
                return
            }
        }
        let window = chunk[position...]
        if let found = Self.find(delimiter, in: window) {
            emitContent(chunk[position..<found], emit: emit)
            position = found + length
            delimiterFound()
            return
        }
        let hold = Self.holdBackStart(delimiter, in: window)
        emitContent(chunk[position..<hold], emit: emit)
        carry = Array(chunk[hold...])
        position = chunk.count
    }

    private mutating func emitContent(_ bytes: ArraySlice<UInt8>, emit: Bool) {
        guard emit, !bytes.isEmpty else { return }
        partBytes += Int64(bytes.count)
        pending.append(.body(bytes))
    }

    private mutating func delimiterFound() {
        if state == .body { pending.append(.partEnd) }
        state = .afterDelimiter
        lineBytes = []
    }

    /// After `CRLF--boundary`: `--` closes the form; optional padding then CRLF opens a part.
    private mutating func readAfterDelimiter() throws {
        while position < chunk.count {
            let byte = chunk[position]
            position += 1
            guard lineBytes.count < Self.maxLineAfterDelimiter else {
                throw MultipartError.malformedBody(reason: "the line after the delimiter \"--\(boundary)\" is too long (transport padding is at most 256 spaces or tabs)")
            }
            lineBytes.append(byte)
            if lineBytes == [0x2D, 0x2D] {
                state = .epilogue
                pending.append(.end)
                position = chunk.count
                return
            }
            if lineBytes.count == 1 && byte == 0x2D { continue }
            if byte == 0x20 || byte == 0x09, lineBytes.count == 1 || lineBytes[lineBytes.count - 2] != 0x0D { continue }
            if byte == 0x0D, lineBytes.count == 1 || lineBytes[lineBytes.count - 2] != 0x0D { continue }
            if byte == 0x0A, lineBytes.count >= 2, lineBytes[lineBytes.count - 2] == 0x0D,
               lineBytes.dropLast(2).allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                try beginPart()
                return
            }
            throw MultipartError.malformedBody(reason: "unexpected bytes after the delimiter \"--\(boundary)\" (the boundary may be a prefix of other text)")
        }
    }

    private mutating func beginPart() throws {
        partCount += 1
        if partCount > limits.maxParts {
            throw MultipartError.limitExceeded(limit: .maxParts, value: Int64(limits.maxParts))
        }
        state = .headers
        lineBytes = []
    }

    /// Collects the header block up to its empty line, then decodes it.
    private mutating func readHeaders() throws {
        let start = max(0, lineBytes.count - 3)
        let room = limits.maxHeaderBytes + 4 - lineBytes.count
        let take = min(chunk.count - position, max(room, 0))
        lineBytes += chunk[position..<(position + take)]
        position += take
        let end: Int
        if lineBytes.starts(with: [0x0D, 0x0A]) {
            end = 0
        } else if let found = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: lineBytes[start...]) {
            end = found + 2
        } else {
            if lineBytes.count > limits.maxHeaderBytes {
                throw MultipartError.limitExceeded(limit: .maxHeaderBytes, value: Int64(limits.maxHeaderBytes))
            }
            return
        }
        guard end <= limits.maxHeaderBytes else {
            throw MultipartError.limitExceeded(limit: .maxHeaderBytes, value: Int64(limits.maxHeaderBytes))
        }
        // Give back what follows the empty line.
        position -= lineBytes.count - (end + 2)
        let head = try HeaderBlockDecoder.decode(lineBytes[0..<end], partNumber: partCount)
        lineBytes = []
        carry = []
        partBytes = 0
        state = .body
        pending.append(.partBegin(head))
    }

    // MARK: - Searching

    /// The index (in `haystack`'s indices) where `needle` first occurs.
    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        haystack.withUnsafeBytes { window in
            needle.withUnsafeBytes { ByteSearch.firstIndex(of: $0, in: window) }
        }.map { haystack.startIndex + $0 }
    }

    /// Where to stop emitting so that a tail that could begin `needle` is held back.
    static func holdBackStart(_ needle: [UInt8], in window: ArraySlice<UInt8>) -> Int {
        var index = max(window.startIndex, window.endIndex - (needle.count - 1))
        while index < window.endIndex {
            if window[index] == needle[0], window[index...].elementsEqual(needle.prefix(window.endIndex - index)) {
                return index
            }
            index += 1
        }
        return window.endIndex
    }
}
