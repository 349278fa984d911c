import Foundation
import Testing
@testable import Multipart
import MultipartFoundation

@Suite("Golden bodies")
struct GoldenBodyTests {
    let boundary = try! Boundary("B")

    @Test("a text field")
    func textField() async throws {
        var form = MultipartForm(boundary: boundary)
        form.append(name: "title", value: "Hello")
        let body = try await form.plan().encodedData()
        #expect(text(body) == "--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n--B--\r\n")
        #expect(form.contentLength == Int64(body.count))
        #expect(form.contentType == "multipart/form-data; boundary=B")
    }

    @Test("an empty form is the closing delimiter alone")
    func emptyForm() async throws {
        let body = try await MultipartForm(boundary: boundary).plan().encodedData()
        #expect(text(body) == "--B--\r\n")
    }

    @Test("a data part with and without a filename")
    func dataParts() async throws {
        var form = MultipartForm(boundary: boundary)
        form.append(name: "raw", bytes: [0x00, 0xFF])
        form.append(name: "blob", data: Data([0x41]), filename: "a.bin")
        form.append(name: "typed", bytes: Array("{}".utf8), mimeType: "application/json")
        let body = try await form.plan().encodedData()
        let expected: [UInt8] = Array("--B\r\nContent-Disposition: form-data; name=\"raw\"\r\n\r\n".utf8) + [0x00, 0xFF]
            + Array("\r\n--B\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\nA".utf8)
            + Array("\r\n--B\r\nContent-Disposition: form-data; name=\"typed\"\r\nContent-Type: application/json\r\n\r\n{}\r\n--B--\r\n".utf8)
        #expect(Array(body) == expected)
    }

    @Test("a file part takes its name and type from the path")
    func filePart() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("report.PDF", "%PDF")
        var form = MultipartForm(boundary: boundary)
        try form.append(name: "doc", fileAt: path)
        try form.append(name: "url", fileURL: URL(fileURLWithPath: path), filename: "other.txt")
        try form.append(name: "typed", fileAt: path, filename: "x", mimeType: "image/png")
        let body = try await form.plan().encodedData()
        #expect(text(body) == """
            --B\r
            Content-Disposition: form-data; name="doc"; filename="report.PDF"\r
            Content-Type: application/pdf\r
            \r
            %PDF\r
            --B\r
            Content-Disposition: form-data; name="url"; filename="other.txt"\r
            Content-Type: text/plain\r
            \r
            %PDF\r
            --B\r
            Content-Disposition: form-data; name="typed"; filename="x"\r
            Content-Type: image/png\r
            \r
            %PDF\r
            --B--\r

            """)
    }

    @Test("a stream part, with and without a declared length")
    func streamPart() async throws {
        var form = MultipartForm(boundary: boundary)
        form.append(name: "s", length: 5, filename: "s.txt") { Chunks(chunks: [Array("ab".utf8), Array("cde".utf8)]) }
        #expect(form.contentLength != nil)
        form.append(name: "u", length: nil) { Chunks(chunks: [Array("xyz".utf8)]) }
        #expect(form.contentLength == nil)
        let plan = try form.plan()
        #expect(plan.contentLength == nil)
        let body = try await plan.encodedData()
        #expect(text(body) == """
            --B\r
            Content-Disposition: form-data; name="s"; filename="s.txt"\r
            Content-Type: text/plain\r
            \r
            abcde\r
            --B\r
            Content-Disposition: form-data; name="u"\r
            \r
            xyz\r
            --B--\r

            """)
    }

    @Test("an InputStream part")
    func inputStreamPart() async throws {
        var form = MultipartForm(boundary: boundary)
        form.append(name: "in", inputStream: InputStream(data: Data("stream!".utf8)), length: 7)
        let body = try await form.plan().encodedData()
        #expect(text(body) == "--B\r\nContent-Disposition: form-data; name=\"in\"\r\n\r\nstream!\r\n--B--\r\n")
    }

    @Test("caller-supplied headers are written as given, after the generated ones")
    func customHeaders() async throws {
        var form = MultipartForm(boundary: boundary)
        form.append(name: "a", bytes: Array("1".utf8), headers: [try HeaderField(name: "X-Note", value: "café")])
        form.append(headers: [try HeaderField(name: "Content-Disposition", value: "form-data; name=\"raw\""), try HeaderField(name: "Content-ID", value: "<1>")], body: .bytes([0x32]))
        let body = try await form.plan().encodedData()
        #expect(text(body) == """
            --B\r
            Content-Disposition: form-data; name="a"\r
            X-Note: café\r
            \r
            1\r
            --B\r
            Content-Disposition: form-data; name="raw"\r
            Content-ID: <1>\r
            \r
            2\r
            --B--\r

            """)
    }

    @Test("names and filenames are escaped as browsers do")
    func escaping() async throws {
        var form = MultipartForm(boundary: boundary)
        form.append(name: "q\"uote\rcr\nlf\r\nboth", bytes: [], filename: "a\"b\r\nc\nd.txt")
        form.append(name: "ünï😀", bytes: [], filename: "ファイル 😀.png")
        form.append(name: "nul\u{0}", bytes: [], filename: "a\u{0}b")
        let body = try await form.plan().encodedData()
        #expect(text(body) == """
            --B\r
            Content-Disposition: form-data; name="q%22uote%0D%0Acr%0D%0Alf%0D%0Aboth"; filename="a%22b%0D%0Ac%0Ad.txt"\r
            Content-Type: text/plain\r
            \r
            \r
            --B\r
            Content-Disposition: form-data; name="ünï😀"; filename="ファイル 😀.png"\r
            Content-Type: image/png\r
            \r
            \r
            --B\r
            Content-Disposition: form-data; name="nul%00"; filename="a%00b"\r
            Content-Type: application/octet-stream\r
            \r
            \r
            --B--\r

            """)
    }

    @Test("the boundary is quoted in Content-Type when it is not a token")
    func quotedBoundary() throws {
        #expect(MultipartForm(boundary: try Boundary("a b:c")).contentType == "multipart/form-data; boundary=\"a b:c\"")
        #expect(MultipartForm(boundary: try Boundary("abc-123_x")).contentType == "multipart/form-data; boundary=abc-123_x")
    }
}

@Suite("README example")
struct ReadmeExampleTests {
    @Test("the README's example produces the bytes and length it shows")
    func readmeExample() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("f.txt", "hi")
        var form = MultipartForm(boundary: try Boundary("B"))
        form.append(name: "a", value: "1")
        try form.append(name: "file", fileAt: path)
        let plan = try form.plan()
        #expect(plan.contentType == "multipart/form-data; boundary=B")
        #expect(plan.contentLength == 159)
        let body = try await plan.encodedData()
        #expect(text(body) == "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--B--\r\n")
    }
}
