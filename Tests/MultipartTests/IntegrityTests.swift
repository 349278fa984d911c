import Foundation
import Testing
@testable import Multipart
import MultipartFoundation

@Suite("Integrity and errors")
struct IntegrityTests {
    /// Every way to produce a body, so that each error is seen from each encoder.
    enum Encoder: CaseIterable {
        case memory, file, chunks

        func run(_ plan: BodyPlan, directory: TemporaryDirectory) async throws {
            switch self {
            case .memory: _ = try await plan.encodedData()
            case .file: try await plan.write(toFile: directory.path + "/out-\(UUID().uuidString)")
            case .chunks: _ = try await readAll(plan, chunkSize: 1000)
            }
        }
    }

    @Test("appending a missing file or a directory fails and names the path")
    func appendChecks() throws {
        let directory = try TemporaryDirectory()
        var form = MultipartForm()
        #expect(throws: MultipartError.fileNotFound(path: directory.path + "/nope")) {
            try form.append(name: "f", fileAt: directory.path + "/nope")
        }
        #expect(throws: MultipartError.notARegularFile(path: directory.path)) {
            try form.append(name: "f", fileAt: directory.path)
        }
        let fifoError = #expect(throws: MultipartError.self) { try form.append(name: "f", fileAt: directory.path + "/missing") }
        #expect(fifoError == .fileNotFound(path: directory.path + "/missing"))
        #expect(form.parts.isEmpty)
        #expect(MultipartError.fileNotFound(path: "/x/y").description.contains("/x/y"))
    }

    @Test("appending a FIFO is refused at once, without waiting for a writer")
    func fifo() async throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let outcome = try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                try await withCheckedThrowingContinuation { continuation in
                    DispatchQueue.global().async {
                        var form = MultipartForm()
                        do {
                            try form.append(name: "f", fileAt: fifo)
                            continuation.resume(returning: "appended")
                        } catch {
                            continuation.resume(returning: String(describing: error))
                        }
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(5))
                return "hung"
            }
            let first = try await group.next() ?? ""
            group.cancelAll()
            if first == "hung" {
                // Release the blocked open by becoming its writer.
                let writer = open(fifo, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { close(writer) }
            }
            return first
        }
        #expect(outcome == MultipartError.notARegularFile(path: fifo).description)
    }

    @Test("a file replaced by another of the same size, or rewritten in place, stops every encoder", arguments: Encoder.allCases)
    func replacedFile(_ encoder: Encoder) async throws {
        for change in ["replaced", "rewritten"] {
            let directory = try TemporaryDirectory()
            let path = try directory.file("photo.jpg", Array(repeating: 0x61, count: 4096))
            var form = MultipartForm()
            try form.append(name: "photo", fileAt: path)
            let plan = try form.plan()
            if change == "replaced" {
                let other = try directory.file("other.jpg", Array(repeating: 0x62, count: 4096))
                #expect(rename(other, path) == 0)
            } else {
                let descriptor = open(path, O_WRONLY)
                #expect(descriptor >= 0)
                _ = Array(repeating: UInt8(0x63), count: 4096).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                // A time that cannot be the one recorded, whatever the clock's resolution.
                var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
                #expect(futimens(descriptor, &times) == 0)
                close(descriptor)
            }
            let error = await #expect(throws: MultipartError.self, "\(change)") { try await encoder.run(plan, directory: directory) }
            #expect(error == .fileReplaced(part: PartLabel(position: 1, name: "photo"), path: path), "\(change): \(String(describing: error))")
        }
    }

    @Test("an unreadable file is refused", .enabled(if: geteuid() != 0, "root reads every file"))
    func unreadable() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("secret", "x")
        chmod(path, 0)
        var form = MultipartForm()
        #expect(throws: MultipartError.fileNotReadable(path: path, errno: EACCES)) { try form.append(name: "f", fileAt: path) }
    }

    @Test("a file that grows or shrinks after it was added stops every encoder", arguments: Encoder.allCases, [-3, 5])
    func fileSizeChanged(encoder: Encoder, delta: Int) async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("changing.bin", [UInt8](repeating: 7, count: 10_000))
        var form = MultipartForm()
        form.append(name: "before", value: "x")
        try form.append(name: "upload", fileAt: path)
        let plan = try form.plan()
        try Data([UInt8](repeating: 8, count: 10_000 + delta)).write(to: URL(fileURLWithPath: path))
        let error = await #expect(throws: MultipartError.self) { try await encoder.run(plan, directory: directory) }
        #expect(error == .fileSizeChanged(part: PartLabel(position: 2, name: "upload"), path: path, expected: 10_000, actual: Int64(10_000 + delta)))
        #expect(error?.description.contains("part 2 (\"upload\")") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["changing.bin"])
    }

    @Test("a stream yielding more or fewer bytes than declared stops every encoder", arguments: Encoder.allCases, [3, 7])
    func streamLength(encoder: Encoder, actual: Int) async throws {
        let directory = try TemporaryDirectory()
        var form = MultipartForm()
        form.append(name: "s", length: 5) { Chunks(chunks: [[UInt8](repeating: 1, count: actual)]) }
        let error = await #expect(throws: MultipartError.self) { try await encoder.run(try form.plan(), directory: directory) }
        #expect(error == .streamLengthMismatch(part: PartLabel(position: 1, name: "s"), declared: 5, produced: Int64(actual)))
    }

    @Test("a failing stream names its part")
    func streamFailure() async throws {
        struct Boom: Error {}
        var form = MultipartForm()
        form.append(name: "s", length: nil) {
            AsyncThrowingStream<[UInt8], any Error> { continuation in continuation.finish(throwing: Boom()) }
        }
        let error = await #expect(throws: MultipartError.self) { _ = try await form.plan().encodedData() }
        guard case .streamFailed(let part, _) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(part == PartLabel(position: 1, name: "s"))
    }

    @Test("an InputStream part can be produced only once")
    func oneShotInputStream() async throws {
        var form = MultipartForm()
        form.append(name: "in", inputStream: InputStream(data: Data([1, 2, 3])), length: 3)
        let plan = try form.plan()
        _ = try await plan.encodedData()
        await #expect(throws: MultipartError.streamAlreadyConsumed(part: PartLabel(position: 1, name: "in"))) {
            _ = try await plan.encodedData()
        }
    }

    @Test("caller-chosen boundaries are validated", arguments: [
        ("", "it is empty"),
        (String(repeating: "a", count: 71), "71 characters"),
        ("abc ", "ends in a space"),
        ("a\"b", "'\"' is not allowed"),
        ("a\r\nb", "byte 0xd is not allowed"),
    ])
    func invalidBoundary(boundary: String, reason: String) {
        let error = #expect(throws: MultipartError.self) { try Boundary(boundary) }
        #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
    }

    @Test("valid boundaries of every bchar and 70 characters are accepted")
    func validBoundary() throws {
        _ = try Boundary("'()+_,-./:=? az09AZ")
        _ = try Boundary(String(repeating: "x", count: 70))
    }

    @Test("the random boundary has 128 random bits and differs each time")
    func randomBoundary() {
        let boundaries = Set((0..<100).map { _ in Boundary.random().value })
        #expect(boundaries.count == 100)
        #expect(boundaries.allSatisfy { $0.hasPrefix("formpost-") && $0.count == 41 })
        let digits = boundaries.map { $0.dropFirst("formpost-".count) }
        #expect(digits.allSatisfy { $0.allSatisfy { "0123456789abcdef".contains($0) } })
        // Every one of the 32 digits, in every position, takes many values across 100 draws.
        for position in 0..<32 {
            let values = Set(digits.map { $0[$0.index($0.startIndex, offsetBy: position)] })
            #expect(values.count >= 8, "position \(position): \(values.sorted())")
        }
    }

    @Test("a part's content is found to hold the delimiter exactly where CRLF + content holds it")
    func delimiterSearch() {
        let delimiter = Array("\r\n--ab".utf8)
        let pieces = ["\r", "\n", "\r\n", "-", "--", "--a", "--ab", "a", "b"].map { Array($0.utf8) }
        var generator = SystemRandomNumberGenerator()
        var found = 0
        for count in 0..<6 {
            for _ in 0..<400 {
                let content = (0..<count).flatMap { _ in pieces.randomElement(using: &generator)! }
                let framed = [0x0D, 0x0A] + content
                let expected = framed.count >= delimiter.count && (0...(framed.count - delimiter.count)).contains { framed[$0..<($0 + delimiter.count)].elementsEqual(delimiter) }
                #expect(ByteSearch.containsDelimiter(content, delimiter: delimiter) == expected, "\(content)")
                if expected { found += 1 }
            }
        }
        #expect(found > 100)
        #expect(ByteSearch.containsDelimiter(Array("--ab".utf8), delimiter: delimiter))
        #expect(!ByteSearch.containsDelimiter(Array("\n--ab".utf8), delimiter: delimiter))
    }

    @Test("the length a form announces is the length of its bytes, empty or not, with any boundary", arguments: [0, 1, 3])
    func announcedLength(parts: Int) async throws {
        for boundary in [Boundary.random(), try Boundary("x"), try Boundary(String(repeating: "b", count: 70))] {
            var form = MultipartForm(boundary: boundary)
            for index in 0..<parts { form.append(name: "f\(index)", value: String(repeating: "v", count: index * 7)) }
            let body = try await form.plan().encodedBytes()
            #expect(form.contentLength == Int64(body.count))
            #expect(try form.plan().contentLength == Int64(body.count))
        }
    }

    @Test("header names that are not tokens and values with CR, LF or NUL are refused", arguments: [
        ("X-Bad", "a\r\nInjected: 1"), ("X-Bad", "a\nb"), ("X-Bad", "a\u{0}b"), ("Bad Name", "v"), ("", "v"), ("X:Y", "v"),
    ])
    func invalidHeader(name: String, value: String) {
        #expect(throws: MultipartError.self) { try HeaderField(name: name, value: value) }
    }

    @Test("in-memory content holding a caller-chosen boundary's delimiter fails the plan")
    func delimiterInDataWithChosenBoundary() throws {
        var form = MultipartForm(boundary: try Boundary("xyz"))
        form.append(name: "a", value: "ok")
        form.append(name: "b", value: "before\r\n--xyz after")
        #expect(throws: MultipartError.boundaryInContent(part: PartLabel(position: 2, name: "b"), boundary: "xyz")) { try form.plan() }
        var atStart = MultipartForm(boundary: try Boundary("xyz"))
        atStart.append(name: "c", value: "--xyz")
        #expect(throws: MultipartError.self) { try atStart.plan() }
    }

    @Test("in-memory content holding a random boundary's delimiter makes the form pick another")
    func delimiterInDataWithRandomBoundary() async throws {
        var form = MultipartForm()
        let first = form.boundary
        form.append(name: "a", value: "x\r\n--\(first.value)--\r\n")
        #expect(form.boundary != first)
        #expect(form.boundary.isRandom)
        let body = try await form.plan().encodedData()
        #expect(Int64(body.count) == form.contentLength)
    }

    @Test("file and stream content is scanned for a caller-chosen boundary, across chunk seams", arguments: Encoder.allCases)
    func delimiterInFileAndStream(encoder: Encoder) async throws {
        let directory = try TemporaryDirectory()
        let content = [UInt8](repeating: 0x61, count: 999) + Array("\r\n--sep".utf8) + [UInt8](repeating: 0x62, count: 5000)
        let path = try directory.file("has-delimiter", content)
        var fileForm = MultipartForm(boundary: try Boundary("sep"))
        try fileForm.append(name: "f", fileAt: path)
        await #expect(throws: MultipartError.boundaryInContent(part: PartLabel(position: 1, name: "f"), boundary: "sep")) {
            try await encoder.run(try fileForm.plan(), directory: directory)
        }
        var streamForm = MultipartForm(boundary: try Boundary("sep"))
        streamForm.append(name: "s", length: Int64(content.count)) { Chunks(chunks: [Array(content[0..<1001]), Array(content[1001...])]) }
        await #expect(throws: MultipartError.boundaryInContent(part: PartLabel(position: 1, name: "s"), boundary: "sep")) {
            try await encoder.run(try streamForm.plan(), directory: directory)
        }
    }

    @Test("writing to a file refuses an existing path and leaves it untouched")
    func outputExists() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("exists", "keep")
        await #expect(throws: MultipartError.outputExists(path: path)) { try await MultipartForm().plan().write(toFile: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep")
    }
}
