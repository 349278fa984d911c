import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Multipart
import NIOCore
import Testing

/// Resumable forms (IETF draft) parsed as their appends arrive: each file part's content is
/// written once, to its own file, the rest aside; the form cut anywhere — in a delimiter, a
/// header block, a file's content — and resumed, also by a server started again on the same
/// directory or from a form stored whole by an earlier version, answers the receipt the
/// plain receiver answers for the same form in one request.
@Suite("Resumable forms parsed as they arrive")
struct ResumableFormTests {
    let client = FormPostClient()
    static func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
    static let uploadOffset = field("Upload-Offset"), uploadComplete = field("Upload-Complete")
    static let boundary = "formpost-resumable-form"

    /// A form with text fields, two files whose content holds the delimiter's first bytes
    /// (`\r\n--formpost-resumable-for`, never followed by its last), and an empty file;
    /// its parts' content.
    static func form() -> (bytes: [UInt8], files: [[UInt8]]) {
        var random = SystemRandomNumberGenerator()
        let near = Array("\r\n--\(boundary.dropLast())".utf8)
        let first = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) } + near + Array("x".utf8) + near
        // A byte other than the delimiter's last after `near`: a random "m" there would
        // complete the delimiter, and the form would be malformed one time in 256.
        let second = near + Array("y".utf8) + (0..<3_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        func part(_ disposition: String, _ content: [UInt8]) -> [UInt8] {
            Array("--\(boundary)\r\nContent-Disposition: form-data; \(disposition)\r\n\r\n".utf8) + content + Array("\r\n".utf8)
        }
        let bytes = Array("preamble\r\n".utf8) + part("name=\"title\"", Array("Holiday".utf8))
            + part("name=\"a\"; filename=\"a.bin\"", first) + part("name=\"note\"", Array("two\r\nlines".utf8))
            + part("name=\"empty\"; filename=\"empty.txt\"", []) + part("name=\"b\"; filename=\"b.bin\"", second)
            + Array("--\(boundary)--\r\nepilogue".utf8)
        return (bytes, [first, [], second])
    }

    @Test("the splitter's pieces, fed in chunks of any size, are the form's bytes in order, and a file part's content pieces are its content")
    func splitterPiecesAreTheForm() throws {
        let (form, files) = Self.form()
        for chunk in [1, 2, 7, 64, 1000, 65_536, form.count] {
            var splitter = FormStreamSplitter(try MultipartParser(boundary: Self.boundary))
            var joined: [UInt8] = []
            var contents: [[UInt8]] = []
            var inFile = false
            for start in stride(from: 0, to: form.count, by: chunk) {
                for piece in try splitter.feed(ByteBuffer(bytes: form[start..<min(start + chunk, form.count)])) {
                    switch piece {
                    case .partBegin(let head):
                        inFile = head.filename != nil
                        if inFile { contents.append([]) }
                    case .bytes(let at, let bytes, let isContent):
                        #expect(at == Int64(joined.count), "chunks of \(chunk): a piece at \(at) after \(joined.count) bytes")
                        joined += bytes.readableBytesView
                        if isContent, inFile { contents[contents.count - 1] += bytes.readableBytesView }
                    case .partEnd, .end:
                        break
                    }
                }
                #expect(splitter.classified == Int64(joined.count) && splitter.classified <= splitter.fed)
            }
            try splitter.finish()
            #expect(joined == form, "chunks of \(chunk): the pieces are the form")
            #expect(contents == files, "chunks of \(chunk): the files' content")
        }
    }

    @Test("a form cut at any kind of place and resumed — by the same server, or by one started again on the directory — answers the plain receiver's receipt, its files stored once",
          arguments: [false, true])
    func cutAnywhereAndResumed(restart: Bool) async throws {
        let (form, files) = Self.form()
        let header = Array("filename=\"a.bin\"\r\n\r\n".utf8)
        let aContent: Int = try #require(form.indices.first { form[$0...].starts(with: header) }) + header.count
        let afterA: Int = aContent + files[0].count
        let inA: [Int] = [aContent - 2, aContent, aContent + 1, aContent + 40_000, afterA - 3]
        let cuts: [Int] = [3, 20, 40, 60] + inA + [afterA + 2, afterA + 30, form.count - 12, form.count - 1]
        let contentType = "multipart/form-data; boundary=\(Self.boundary)"
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let expected = try await withUploadServer(directory: directory) { port in
            let answer = try await client.send(.bytes(form, contentType: contentType), to: URL(string: "http://127.0.0.1:\(port)/upload")!)
            #expect(answer.status == 200, "the plain receiver: \(answer.status) \(answer.text)")
            return try answer.decode(Receipt.self)
        }
        for cut in cuts {
            @Sendable func create(_ port: Int) async throws -> String {
                let created = try await draft(.post, "http://127.0.0.1:\(port)/upload", body: Array(form[..<cut]), contentType: contentType,
                                              headers: [Self.uploadComplete: "?0"])
                #expect(created.status == 201, "cut at \(cut): \(created.text)")
                return created.headers[HTTPField.Name.location] ?? ""
            }
            @Sendable func resume(_ url: String, _ port: Int) async throws -> Receipt {
                let base = "http://127.0.0.1:\(port)"
                let head = try await draft(.head, base + url)
                let offset = try #require(head.headers[Self.uploadOffset].flatMap { Int($0) })
                #expect(offset <= cut && offset > cut - 200, "cut at \(cut): the offset is \(offset)")
                let done = try await draft(.patch, base + url, body: Array(form[offset...]), headers: [Self.uploadOffset: String(offset), Self.uploadComplete: "?1"])
                #expect(done.status == 200, "cut at \(cut): \(done.text)")
                do {
                    return try done.decode(Receipt.self)
                } catch {
                    Issue.record("cut at \(cut): the answer \(done.status) is no receipt: \(done.text)")
                    throw error
                }
            }
            let receipt: Receipt
            if restart {
                let url = try await withUploadServer(directory: directory, resumableExpiry: .seconds(3600)) { try await create($0) }
                receipt = try await withUploadServer(directory: directory, resumableExpiry: .seconds(3600)) { try await resume(url, $0) }
            } else {
                receipt = try await withUploadServer(directory: directory, resumableExpiry: .seconds(3600)) { try await resume(try await create($0), $0) }
            }
            #expect(receipt.fields == expected.fields, "cut at \(cut)")
            #expect(receipt.files.map { [$0.name, $0.filename, $0.sha256, String($0.size)] } == expected.files.map { [$0.name, $0.filename, $0.sha256, String($0.size)] },
                    "cut at \(cut)")
            for (file, content) in zip(receipt.files, files) {
                #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file.storedAs)) == Data(content), "cut at \(cut): \(file.filename) stored")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: directory + "/.resumable").filter { !$0.hasSuffix(".json") }
            #expect(left.isEmpty, "cut at \(cut): nothing but the state is left: \(left)")
        }
    }

    @Test("a form in progress stored whole, as earlier versions stored it, is split once when it goes on, and answers the plain receiver's receipt")
    func formStoredWholeGoesOn() async throws {
        let (form, files) = Self.form()
        let contentType = "multipart/form-data; boundary=\(Self.boundary)"
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cut = 50_000
        let url = try await withUploadServer(directory: directory, resumableExpiry: .seconds(3600)) { port in
            let created = try await draft(.post, "http://127.0.0.1:\(port)/upload", body: Array(form[..<cut]), contentType: contentType,
                                          headers: [Self.uploadComplete: "?0"])
            #expect(created.status == 201, "\(created.text)")
            return created.headers[HTTPField.Name.location] ?? ""
        }
        // The layout of earlier versions: the form's bytes so far in ID.data, nothing else.
        let state = directory + "/.resumable/"
        let id = String(url.split(separator: "/").last ?? "")
        for name in try FileManager.default.contentsOfDirectory(atPath: state) where name.hasPrefix(id) && !name.hasSuffix(".json") {
            try FileManager.default.removeItem(atPath: state + name)
        }
        try Data(form[..<cut]).write(to: URL(fileURLWithPath: state + id + ".data"))
        let receipt = try await withUploadServer(directory: directory, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            #expect(try await draft(.head, base + url).headers[Self.uploadOffset] == String(cut))
            let done = try await draft(.patch, base + url, body: Array(form[cut...]), headers: [Self.uploadOffset: String(cut), Self.uploadComplete: "?1"])
            #expect(done.status == 200, "\(done.text)")
            return try done.decode(Receipt.self)
        }
        #expect(receipt.fields.map(\.name) == ["title", "note"] && receipt.files.map(\.sha256) == files.map { sha256Hex($0) })
        for (file, content) in zip(receipt.files, files) {
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file.storedAs)) == Data(content), "\(file.filename) stored")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).filter { !$0.hasSuffix(".json") }.isEmpty)
    }

    // MARK: - Requests

    func draft(_ method: RequestMethod, _ url: String, body: [UInt8]? = nil, contentType: String = "application/partial-upload",
               headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Upload-Draft-Interop-Version"): "8"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: contentType) }, to: URL(string: url)!, method: method, headers: all)
    }

    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "formpost-resumable-form-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
