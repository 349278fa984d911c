import Foundation
import Testing
@testable import Multipart

/// A parsed part, for comparisons.
struct ParsedPart: Equatable {
    var head: PartHead
    var bytes: [UInt8]
}

/// Parses `body` fed in chunks whose sizes `nextSize` picks; returns the parts.
func parse(_ body: [UInt8], contentType: String, limits: MultipartParserLimits = MultipartParserLimits(), nextSize: () -> Int) throws -> [ParsedPart] {
    var parser = try MultipartParser(contentType: contentType, limits: limits)
    var parts: [ParsedPart] = []
    var offset = 0
    var ended = false
    repeat {
        let size = min(max(1, nextSize()), body.count - offset)
        parser.append(Array(body[offset..<(offset + size)]))
        offset += size
        while let event = try parser.next() {
            switch event {
            case .partBegin(let head): parts.append(ParsedPart(head: head, bytes: []))
            case .body(let bytes): parts[parts.count - 1].bytes += bytes
            case .partEnd: break
            case .end: ended = true
            }
        }
    } while offset < body.count
    try parser.finish()
    #expect(ended)
    return parts
}

/// Parses `body` in place with ``MultipartParser/parse(_:_:)``, in chunks whose sizes
/// `nextSize` picks; returns the parts and how many content bytes were views of a chunk
/// (the rest were copies of bytes held back at a chunk's end).
func parseInPlace(_ body: [UInt8], contentType: String, nextSize: () -> Int) throws -> (parts: [ParsedPart], inPlace: Int) {
    var parser = try MultipartParser(contentType: contentType)
    var parts: [ParsedPart] = []
    var inPlace = 0
    var offset = 0
    repeat {
        let size = min(max(1, nextSize()), body.count - offset)
        try body[offset..<(offset + size)].withUnsafeBytes { chunk in
            try parser.parse(chunk) { event in
                switch event {
                case .partBegin(let head): parts.append(ParsedPart(head: head, bytes: []))
                case .body(let bytes):
                    parts[parts.count - 1].bytes += bytes
                    if let range = event.contentRange(in: chunk) {
                        #expect(range.count == bytes.count && chunk[range].elementsEqual(bytes))
                        inPlace += range.count
                    }
                case .partEnd, .end: break
                }
            }
        }
        offset += size
    } while offset < body.count
    try parser.finish()
    return (parts, inPlace)
}

@Suite("Parser")
struct ParserTests {
    @Test("everything the encoder produces parses back identically, in random chunk sizes", arguments: 1...40)
    func roundTrip(seed: Int) async throws {
        let directory = try TemporaryDirectory()
        var random = TestRandom(state: UInt64(seed) &* 0xA24B_AED4_963E_E407 | 1)
        let boundary = seed % 3 == 0 ? try Boundary("short") : Boundary.random()
        var form = MultipartForm(boundary: boundary)
        var expected: [(name: String, filename: String?, bytes: [UInt8])] = []
        for index in 0..<random.int(0...7) {
            let name = ["plain", "quo\"te", "new\nline", "ünï😀", "a[b][]"][random.int(0...4)] + "\(index)"
            var bytes = random.bytes(random.int(0...20_000))
            if seed % 3 == 0 { bytes = bytes.map { $0 == UInt8(ascii: "-") ? 0x2E : $0 } }
            let filename: String? = random.int(0...1) == 0 ? nil : ["f.bin", "q\"uote.txt", "c:\\dir\\x.png", "😀.jpg"][random.int(0...3)]
            if random.int(0...1) == 0 {
                form.append(name: name, bytes: bytes, filename: filename)
            } else {
                let path = try directory.file("p\(index)", bytes)
                try form.append(name: name, fileAt: path, filename: filename ?? "p\(index)")
            }
            let storedFilename = filename ?? (form.parts.last!.headers.first!.value.contains("filename") ? "p\(index)" : nil)
            expected.append((ContentDisposition.normaliseNewlines(name), storedFilename, bytes))
        }
        let plan = try form.plan()
        let body = Array(try await plan.encodedData())
        for maxChunk in [1, 13, 100, 4096, 70_000] {
            let parts = try parse(body, contentType: plan.contentType) { random.int(1...maxChunk) }
            #expect(parts.map(\.head.name) == expected.map(\.name))
            #expect(parts.map(\.head.filename) == expected.map(\.filename))
            #expect(parts.map(\.bytes) == expected.map(\.bytes))
            #expect(parts.map(\.head.headers) == form.parts.map(\.headers))
            let (partsInPlace, _) = try parseInPlace(body, contentType: plan.contentType) { random.int(1...maxChunk) }
            #expect(partsInPlace == parts)
        }
    }

    @Test("preamble, epilogue, transport padding and a boundary at the very start")
    func lenientWhereRealClientsDiffer() throws {
        let body = Array("preamble text\r\n--XYZ  \t\r\ncontent-disposition: FORM-DATA; NAME=\"a\"\r\n\r\n1\r\n--XYZ\r\nContent-Disposition: form-data; name=b\r\n\r\n2\r\n--XYZ--\r\nepilogue\r\n".utf8)
        let parts = try parse(body, contentType: "Multipart/Form-Data; BOUNDARY=\"XYZ\"") { 5 }
        #expect(parts.map(\.head.name) == ["a", "b"])
        #expect(parts.map { text($0.bytes) } == ["1", "2"])
    }

    @Test("browser escapes, filename* and folded headers are decoded")
    func decoding() throws {
        let body = Array("""
            --B\r
            Content-Disposition: form-data; name="a%22b%0D%0Ac"; filename="x%22y.txt"\r
            \r
            \r
            --B\r
            Content-Disposition: form-data; name="f"; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt\r
            X-Long: one\r
             two\r
            \r
            \r
            --B--
            """.utf8)
        let parts = try parse(body, contentType: "multipart/form-data; boundary=B") { 1000 }
        #expect(parts[0].head.name == "a\"b\r\nc")
        #expect(parts[0].head.filename == "x\"y.txt")
        #expect(parts[1].head.filename == "€ rates.txt")
        #expect(parts[1].head.header("x-long") == "one two")
    }

    @Test("body events are slices of the fed chunk, not copies")
    func zeroCopySlices() throws {
        var parser = try MultipartParser(boundary: "B")
        let chunk = Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n".utf8) + [UInt8](repeating: 7, count: 100_000) + Array("\r\n--B--".utf8)
        parser.append(chunk)
        var sawBody = false
        while let event = try parser.next() {
            if case .body(let slice) = event {
                sawBody = true
                let shares = chunk.withUnsafeBufferPointer { whole in
                    slice.withUnsafeBufferPointer { $0.baseAddress! >= whole.baseAddress! && $0.baseAddress! < whole.baseAddress! + whole.count }
                }
                #expect(shares && slice.count == 100_000)
            }
        }
        #expect(sawBody)
    }

    @Test("parsing in place hands out views of the chunk: only bytes held back at a chunk's end are copied")
    func inPlaceViews() throws {
        var random = TestRandom(state: 99)
        let content = random.bytes(1 << 20)
        let body = Array("--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"r.bin\"\r\n\r\n".utf8) + content + Array("\r\n--B--\r\n".utf8)
        let chunkSize = 65_536
        let (parts, inPlace) = try parseInPlace(body, contentType: "multipart/form-data; boundary=B") { chunkSize }
        #expect(parts.map(\.bytes) == [content])
        let chunks = body.count / chunkSize + 1
        #expect(inPlace >= content.count - chunks * "\r\n--B".utf8.count, "only \(inPlace) of \(content.count) content bytes were views")
    }

    @Test("an error in an appended chunk comes after the events before it, and stays")
    func errorAfterEvents() throws {
        var parser = try MultipartParser(boundary: "B")
        parser.append(Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B\r\nno colon\r\n\r\n".utf8))
        var events: [MultipartEvent] = []
        let error = #expect(throws: MultipartError.self) { while let event = try parser.next() { events.append(event) } }
        #expect(events.count == 3, "\(events)")
        #expect(error?.description.contains("without a colon") == true)
        #expect(throws: MultipartError.self) { try parser.next() }
        parser.append(Array("more".utf8))
        #expect(throws: MultipartError.self) { try parser.finish() }
    }

    @Test("malformed bodies are errors with clear messages", arguments: [
        ("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated", "ended before the closing delimiter"),
        ("", "ended before the closing delimiter"),
        ("--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--", "part 1 has no Content-Disposition"),
        ("--B\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--B--", "form-data; name="),
        ("--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--", "form-data; name="),
        ("--B\r\nno colon here\r\n\r\nx\r\n--B--", "without a colon"),
        ("--B\r\nBad Name: x\r\n\r\nx\r\n--B--", "invalid name"),
        ("--B\r\n Content-Disposition: form-data; name=a\r\n\r\nx\r\n--B--", "continuation line"),
        ("--Bxyz\r\n\r\n", "unexpected bytes after the delimiter"),
    ])
    func malformed(body: String, message: String) {
        let error = #expect(throws: MultipartError.self) {
            _ = try parse(Array(body.utf8), contentType: "multipart/form-data; boundary=B") { 3 }
        }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }

    @Test("limits are enforced and named")
    func limits() throws {
        let part = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n0123456789\r\n"
        let many = Array((String(repeating: part, count: 5) + "--B--").utf8)
        func check(_ limits: MultipartParserLimits, _ name: String) {
            let error = #expect(throws: MultipartError.self) { _ = try parse(many, contentType: "multipart/form-data; boundary=B", limits: limits) { 7 } }
            #expect(error?.description.contains(name) == true, "\(String(describing: error))")
        }
        check(MultipartParserLimits(maxParts: 4), "maxParts")
        check(MultipartParserLimits(maxPartBytes: 9), "maxPartBytes")
        check(MultipartParserLimits(maxTotalBytes: 100), "maxTotalBytes")
        check(MultipartParserLimits(maxHeaderBytes: 20), "maxHeaderBytes")
        #expect(try parse(many, contentType: "multipart/form-data; boundary=B", limits: MultipartParserLimits(maxParts: 5, maxPartBytes: 10)) { 7 }.count == 5)
    }

    @Test("a header block that never ends stays bounded")
    func endlessHeaders() {
        var parser = try! MultipartParser(boundary: "B")
        parser.append(Array("--B\r\n".utf8))
        let filler = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        let error = #expect(throws: MultipartError.self) {
            for _ in 0..<100 {
                parser.append(filler)
                while try parser.next() != nil {}
            }
        }
        #expect(error == .limitExceeded(limit: .maxHeaderBytes, value: 16384))
    }

    @Test("a body without the delimiter in its first 16 KiB is refused there, without reading the rest; a short preamble is skipped")
    func endlessPreamble() throws {
        var parser = try MultipartParser(boundary: "B")
        let garbage = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var fed = 0
        let error = #expect(throws: MultipartError.self) {
            for _ in 0..<25_600 {   // 100 MiB, were it all read
                parser.append(garbage)
                fed += garbage.count
                while try parser.next() != nil {}
            }
        }
        #expect(error == .malformedBody(reason: "no delimiter \"--B\" in its first 16384 bytes: it is not a form with that boundary"))
        #expect(fed <= 16384 + 4096, "the parser read \(fed) bytes of garbage before refusing it")
        let withPreamble = Array("This is a multi-part message in MIME format.\r\n--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n".utf8)
        #expect(try parse(withPreamble, contentType: "multipart/form-data; boundary=B") { 7 }.map(\.head.name) == ["a"])
    }

    @Test("content types without a boundary are refused", arguments: ["text/plain", "multipart/form-data", "multipart/form-data; boundary=", "application/json; boundary=x"])
    func noBoundary(contentType: String) {
        #expect(throws: MultipartError.missingBoundary(contentType: contentType)) { try MultipartParser(contentType: contentType) }
    }

    @Test("a small form is collected into fields and files")
    func collect() async throws {
        var form = MultipartForm()
        form.append(name: "title", value: "Hi ✓")
        form.append(name: "doc", bytes: [1, 2, 3], filename: "a.bin")
        let plan = try form.plan()
        let collected = try CollectedForm(body: Array(try await plan.encodedData()), contentType: plan.contentType)
        #expect(collected.fields == [.init(name: "title", value: "Hi ✓")])
        #expect(collected.files == [.init(name: "doc", filename: "a.bin", contentType: "application/octet-stream", bytes: [1, 2, 3])])
        #expect(collected.value("title") == "Hi ✓")
    }
}

/// Hostile bodies: whatever they hold, the parser keeps at most ``MultipartParser/heldBytesBound``
/// bytes besides the chunk it is reading, and refuses the body with the right error.
@Suite("Parser memory under hostile input")
struct ParserBoundTests {
    /// A hostile body: a start, then `filler` repeated to `size` bytes.
    struct Hostile: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let start: String
        let filler: [UInt8]
        let size: Int
        /// What the error must say (nil: the body is refused only at its end, for lack of a closing delimiter).
        let reason: String?
    }

    static let cases: [Hostile] = [
        Hostile(testDescription: "CRs after a delimiter", start: "--B", filler: [0x0D], size: 64 << 20, reason: "after the delimiter"),
        Hostile(testDescription: "spaces after a delimiter", start: "--B", filler: [0x20], size: 64 << 20, reason: "after the delimiter"),
        Hostile(testDescription: "CR LWSP after a delimiter", start: "--B", filler: [0x0D, 0x20], size: 64 << 20, reason: "after the delimiter"),
        Hostile(testDescription: "a header line that never ends", start: "--B\r\nContent-Disposition: form-data; name=\"a\"",
                filler: Array("x".utf8), size: 64 << 20, reason: "maxHeaderBytes"),
        Hostile(testDescription: "partial delimiters in a body", start: "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n",
                filler: Array("\r\n-\r\n--\r".utf8), size: 64 << 20, reason: nil),
        Hostile(testDescription: "partial delimiters in the preamble", start: "", filler: Array("\r\n-\r\n--\r\n--C".utf8), size: 64 << 20, reason: "first 16384 bytes"),
    ]

    @Test("the bytes held stay under the bound and the body is refused", arguments: cases)
    func bounded(_ hostile: Hostile) throws {
        var parser = try MultipartParser(boundary: "B")
        let bound = parser.heldBytesBound
        #expect(bound < 20_000)
        var chunk = Array(hostile.start.utf8)
        var fed = 0
        var failure: MultipartError?
        var mostHeld = 0
        feeding: while fed < hostile.size {
            while chunk.count < 65_536 { chunk += hostile.filler }
            parser.append(chunk)
            fed += chunk.count
            chunk = []
            do {
                while try parser.next() != nil {}
            } catch let error as MultipartError {
                failure = error
                break feeding
            }
            mostHeld = max(mostHeld, parser.heldBytes)
            #expect(parser.heldBytes <= bound, "held \(parser.heldBytes) bytes after \(fed) bytes of \(hostile.testDescription)")
            if parser.heldBytes > bound { break }
        }
        if failure == nil {
            do { try parser.finish() } catch let error as MultipartError { failure = error }
        }
        let reason = String(describing: try #require(failure, "the hostile body was accepted"))
        #expect(reason.contains(hostile.reason ?? "closing delimiter"), "\(reason)")
        #expect(fed < 1 << 20 || hostile.reason == nil, "refused only after \(fed) bytes")
        #expect(mostHeld <= bound)
    }
}
