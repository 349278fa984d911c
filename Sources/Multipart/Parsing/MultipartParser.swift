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
/// Or parse bytes where they are — a NIO `ByteBuffer`, `Data`, mapped memory — without
/// copying them into an array, with ``parse(_:_:)``: content comes as views of those bytes.
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
    /// Bytes held back at a chunk's end in the preamble or a body: a possible delimiter start.
    /// It begins as the CRLF that conceptually precedes a delimiter at the body's very start.
    private var carry: [UInt8] = [0x0D, 0x0A]
    private var lineBytes: [UInt8] = []
    private var partCount = 0
    private var partBytes: Int64 = 0
    private var totalBytes: Int64 = 0
    /// The error that ended parsing; every later call throws it again.
    private var failed: (any Error)?
    /// Events of appended chunks that ``next()`` has not returned yet.
    private var pending: [MultipartEvent] = []
    private var pendingIndex = 0
    /// An error found in an appended chunk, thrown by ``next()`` after the events before it.
    private var pendingError: (any Error)?

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

    /// Hands the parser the body's next bytes; take the events they produce with ``next()``.
    ///
    /// The chunk is parsed at once: content events are slices of `bytes` (no copy), and an
    /// error it holds is thrown by ``next()`` after the events that precede it.
    public mutating func append(_ bytes: [UInt8]) {
        guard failed == nil, pendingError == nil else { return }
        if pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
        }
        var events: [MultipartEvent] = []
        do {
            try bytes.withUnsafeBytes { input in
                try parse(input) { event in
                    switch event {
                    case .partBegin(let head): events.append(.partBegin(head))
                    case .body(let content):
                        events.append(.body(event.contentRange(in: input).map { bytes[$0] } ?? Array(content)[...]))
                    case .partEnd: events.append(.partEnd)
                    case .end: events.append(.end)
                    }
                }
            }
        } catch {
            pendingError = error
        }
        pending += events
    }

    /// The next event of the chunks appended, or nil when more input is needed (or the
    /// form is complete).
    ///
    /// - Throws: ``MultipartError/malformedBody(reason:)`` or ``MultipartError/limitExceeded(limit:value:)``;
    ///   after an error, every call throws it again.
    public mutating func next() throws -> MultipartEvent? {
        if pendingIndex < pending.count {
            pendingIndex += 1
            return pending[pendingIndex - 1]
        }
        if let error = pendingError ?? failed { throw error }
        return nil
    }

    /// Parses `input` where it lies, handing each event to `handle` as it is found: the
    /// content of a `.body` event is a view of `input` (or, for the few bytes a previous
    /// call held back as a possible delimiter start, of the parser's own storage), valid
    /// only during that call of `handle`. A NIO receiver parses each buffer in place:
    ///
    ///     try buffer.withUnsafeReadableBytes { bytes in
    ///         try parser.parse(bytes) { event in … }
    ///     }
    ///
    /// Memory is bounded as with ``append(_:)``: nothing of `input` is kept except a
    /// possible delimiter start at its end, or a header block being collected.
    ///
    /// - Throws: ``MultipartError/malformedBody(reason:)``, ``MultipartError/limitExceeded(limit:value:)``,
    ///   or what `handle` throws; after an error, every call throws it again.
    public mutating func parse(_ input: UnsafeRawBufferPointer, _ handle: (BorrowedMultipartEvent) throws -> Void) throws {
        if let failed { throw failed }
        do {
            totalBytes += Int64(input.count)
            var position = 0
            while position < input.count {
                if let max = limits.maxTotalBytes, totalBytes > max, state != .epilogue {
                    throw MultipartError.limitExceeded(limit: .maxTotalBytes, value: max)
                }
                switch state {
                case .preamble:
                    position = try scanContent(input, from: position, emit: false, handle)
                    if state == .preamble, totalBytes - Int64(carry.count) > Int64(limits.maxPreambleBytes) {
                        throw MultipartError.malformedBody(
                            reason: "no delimiter \"--\(boundary)\" in its first \(limits.maxPreambleBytes) bytes: it is not a form with that boundary")
                    }
                case .body:
                    position = try scanContent(input, from: position, emit: true, handle)
                    if let max = limits.maxPartBytes, partBytes > max {
                        throw MultipartError.limitExceeded(limit: .maxPartBytes, value: max)
                    }
                case .afterDelimiter:
                    position = try readAfterDelimiter(input, from: position, handle)
                case .headers:
                    position = try readHeaders(input, from: position, handle)
                case .epilogue:
                    position = input.count
                }
            }
        } catch {
            failed = error
            throw error
        }
    }

    /// Declares the end of the input.
    ///
    /// - Throws: ``MultipartError/malformedBody(reason:)`` when the closing delimiter was not read.
    public mutating func finish() throws {
        if let error = failed ?? pendingError { throw error }
        guard isComplete else {
            let error = MultipartError.malformedBody(reason: "it ended before the closing delimiter \"--\(boundary)--\"")
            failed = error
            throw error
        }
    }

    // MARK: - The machine

    /// Scans preamble or body content for the delimiter from `start`, handing body bytes
    /// to `handle` when `emit`; returns where scanning stopped.
    private mutating func scanContent(_ input: UnsafeRawBufferPointer, from start: Int, emit: Bool,
                                      _ handle: (BorrowedMultipartEvent) throws -> Void) throws -> Int {
        let length = delimiter.count
        var position = start
        if !carry.isEmpty {
            let take = min(length - 1, input.count - position)
            let joint = carry + UnsafeRawBufferPointer(rebasing: input[position..<(position + take)])
            if let found = joint.withUnsafeBytes({ Self.find(delimiter, in: $0) }) {
                try emitContent(joint[0..<found], emit: emit, handle)
                position += found + length - carry.count
                carry = []
                try delimiterFound(handle)
                return position
            }
            if take == length - 1 {
                try emitContent(carry[...], emit: emit, handle)
                carry = []
            } else {
                let hold = joint.withUnsafeBytes { Self.holdBackStart(delimiter, in: $0) }
                try emitContent(joint[0..<hold], emit: emit, handle)
                carry = Array(joint[hold...])
                return position + take
            }
        }
        let window = UnsafeRawBufferPointer(rebasing: input[position...])
        if let found = Self.find(delimiter, in: window) {
            try emitContent(UnsafeRawBufferPointer(rebasing: window[0..<found]), emit: emit, handle)
            try delimiterFound(handle)
            return position + found + length
        }
        let hold = Self.holdBackStart(delimiter, in: window)
        try emitContent(UnsafeRawBufferPointer(rebasing: window[0..<hold]), emit: emit, handle)
        carry = Array(UnsafeRawBufferPointer(rebasing: window[hold...]))
        position = input.count
        return position
    }

    private mutating func emitContent(_ bytes: UnsafeRawBufferPointer, emit: Bool, _ handle: (BorrowedMultipartEvent) throws -> Void) throws {
        guard emit, !bytes.isEmpty else { return }
        partBytes += Int64(bytes.count)
        try handle(.body(bytes))
    }

    private mutating func emitContent(_ bytes: ArraySlice<UInt8>, emit: Bool, _ handle: (BorrowedMultipartEvent) throws -> Void) throws {
        guard emit, !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { try emitContent($0, emit: emit, handle) }
    }

    private mutating func delimiterFound(_ handle: (BorrowedMultipartEvent) throws -> Void) throws {
        let endsPart = state == .body
        state = .afterDelimiter
        lineBytes = []
        if endsPart { try handle(.partEnd) }
    }

    /// After `CRLF--boundary`: `--` closes the form; optional padding then CRLF opens a part.
    private mutating func readAfterDelimiter(_ input: UnsafeRawBufferPointer, from start: Int,
                                             _ handle: (BorrowedMultipartEvent) throws -> Void) throws -> Int {
        var position = start
        while position < input.count {
            let byte = input[position]
            position += 1
            guard lineBytes.count < Self.maxLineAfterDelimiter else {
                throw MultipartError.malformedBody(reason: "the line after the delimiter \"--\(boundary)\" is too long (transport padding is at most 256 spaces or tabs)")
            }
            lineBytes.append(byte)
            if lineBytes == [0x2D, 0x2D] {
                state = .epilogue
                try handle(.end)
                return input.count
            }
            if lineBytes.count == 1 && byte == 0x2D { continue }
            if byte == 0x20 || byte == 0x09, lineBytes.count == 1 || lineBytes[lineBytes.count - 2] != 0x0D { continue }
            if byte == 0x0D, lineBytes.count == 1 || lineBytes[lineBytes.count - 2] != 0x0D { continue }
            if byte == 0x0A, lineBytes.count >= 2, lineBytes[lineBytes.count - 2] == 0x0D,
               lineBytes.dropLast(2).allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                try beginPart()
                return position
            }
            throw MultipartError.malformedBody(reason: "unexpected bytes after the delimiter \"--\(boundary)\" (the boundary may be a prefix of other text)")
        }
        return position
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
    private mutating func readHeaders(_ input: UnsafeRawBufferPointer, from start: Int,
                                      _ handle: (BorrowedMultipartEvent) throws -> Void) throws -> Int {
        let searchFrom = max(0, lineBytes.count - 3)
        let room = limits.maxHeaderBytes + 4 - lineBytes.count
        let take = min(input.count - start, max(room, 0))
        lineBytes += UnsafeRawBufferPointer(rebasing: input[start..<(start + take)])
        let end: Int
        if lineBytes.starts(with: [0x0D, 0x0A]) {
            end = 0
        } else if let found = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: lineBytes[searchFrom...]) {
            end = found + 2
        } else {
            if lineBytes.count > limits.maxHeaderBytes {
                throw MultipartError.limitExceeded(limit: .maxHeaderBytes, value: Int64(limits.maxHeaderBytes))
            }
            return start + take
        }
        guard end <= limits.maxHeaderBytes else {
            throw MultipartError.limitExceeded(limit: .maxHeaderBytes, value: Int64(limits.maxHeaderBytes))
        }
        // Give back what follows the empty line.
        let position = start + take - (lineBytes.count - (end + 2))
        let head = try HeaderBlockDecoder.decode(lineBytes[0..<end], partNumber: partCount)
        lineBytes = []
        carry = []
        partBytes = 0
        state = .body
        try handle(.partBegin(head))
        return position
    }

    // MARK: - Searching

    /// The offset in `haystack` where `needle` first occurs.
    static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int? {
        needle.withUnsafeBytes { ByteSearch.firstIndex(of: $0, in: haystack) }
    }

    /// The index (in `haystack`'s indices) where `needle` first occurs.
    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        haystack.withUnsafeBytes { find(needle, in: $0) }.map { haystack.startIndex + $0 }
    }

    /// Where to stop emitting so that a tail that could begin `needle` is held back.
    static func holdBackStart(_ needle: [UInt8], in window: UnsafeRawBufferPointer) -> Int {
        var index = max(0, window.count - (needle.count - 1))
        while index < window.count {
            if window[index] == needle[0] {
                let tail = window.count - index
                if (0..<tail).allSatisfy({ window[index + $0] == needle[$0] }) { return index }
            }
            index += 1
        }
        return window.count
    }
}
