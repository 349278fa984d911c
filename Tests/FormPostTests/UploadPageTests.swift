import Foundation
import FormPost
import FormPostServer
import Logging
import Multipart
import Testing

/// Runs `formpost serve`'s server (an ``UploadServer``, with or without its upload page, with
/// or without the receiver of the IETF draft's resumable uploads) storing as `configuration`
/// says, and `body` with its base URL (`http://127.0.0.1:PORT/`).
func withPageServer<T: Sendable>(_ configuration: ReceiverConfiguration, uploadPage: Bool = true, resumable: Bool = false,
                                 _ body: @Sendable (URL) async throws -> T) async throws -> T {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let receiver = try UploadReceiver(configuration: configuration, logger: logger)
    let draft = resumable ? try ResumableUploadReceiver(receiver: receiver, logger: logger) : nil
    let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, resumable: draft, uploadPage: uploadPage)
    return try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
        try await body(URL(string: "http://127.0.0.1:\(port)/")!)
    }
}

/// The page `formpost serve` answers at `GET /`, over HTTP; ``BrowserTests`` use it in Chromium.
@Suite("Upload page")
struct UploadPageTests {
    let client = FormPostClient()

    @Test("GET / answers the page, HEAD / its head alone; other paths and POST / go to the receiver")
    func servesPage() async throws {
        let storage = try SampleDirectory()
        let (page, head, other, posted) = try await withPageServer(ReceiverConfiguration(directory: storage.path), resumable: true) { base in
            let page = try await client.send(nil, to: base, method: .get)
            let head = try await client.send(nil, to: base, method: .head)
            let other = try await client.send(nil, to: base.appendingPathComponent("index.html"), method: .get)
            var form = MultipartForm()
            form.append(name: "title", value: "to the page's own URL")
            form.append(name: "files", bytes: Array("hello".utf8), filename: "hello.txt")
            let posted = try await client.upload(form, to: base)
            return (page, head, other, posted)
        }
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Content-Security-Policy") == UploadPage.contentSecurityPolicy)
        #expect(page.header("X-Content-Type-Options") == "nosniff")
        #expect(page.body == Array(UploadPage.html.utf8))
        for id in ["upload-form", "title", "files", "drop-zone", "submit", "progress", "receipt-files", "receipt-json", "plain-form", "plain-files"] {
            #expect(UploadPage.html.contains(#"id="\#(id)""#), "the page has no element \(id)")
        }
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(UploadPage.html.utf8.count))
        #expect(head.header("Content-Type") == "text/html; charset=utf-8")
        #expect(other.status == 405 && other.header("Allow") == "POST")
        let receipt = try posted.validate().decode(Receipt.self)
        #expect(receipt.fields == [.init(name: "title", value: "to the page's own URL")])
        #expect(receipt.files.map(\.filename) == ["hello.txt"] && receipt.files.first?.sha256 == sha256Hex(Data("hello".utf8)))
    }

    @Test("a server without resumable uploads serves the same page, saying so on its body (its script then sends the whole form in one request)")
    func pageWithoutResumableUploads() async throws {
        let storage = try SampleDirectory()
        let page = try await withPageServer(ReceiverConfiguration(directory: storage.path)) { base in
            try await client.send(nil, to: base, method: .get)
        }
        #expect(UploadPage.html.contains(#"<body data-state="idle" data-resumable="true">"#))
        #expect(page.status == 200 && page.header("Content-Security-Policy") == UploadPage.contentSecurityPolicy)
        #expect(page.text == UploadPage.html.replacingOccurrences(of: #"data-resumable="true""#, with: #"data-resumable="false""#))
    }

    @Test("the requests the page's script sends: an upload created empty at the page's URL, the form's framing (acknowledged whole), the file, the framing after it; the answer is the form's receipt, as for the form in one request")
    func pageRequests() async throws {
        let storage = try SampleDirectory()
        let field: @Sendable (String) -> HTTPField.Name = { HTTPField.Name($0)! }
        let boundary = "----FormPostPage0123456789abcdef01234567"
        let head = Array(("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nGrüße\r\n--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"files\"; filename=\"a %22quoted%22%0D%0Aname.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n").utf8)
        // The file's content ends with the delimiter's first bytes: the server may hold them back.
        let file = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) } + Array("\r\n--".utf8)
        let tail = Array("\r\n--\(boundary)--\r\n".utf8)
        let body = head + file + tail
        let (created, framed, appended, answer) = try await withPageServer(ReceiverConfiguration(directory: storage.path), resumable: true) { base in
            let created = try await client.send(nil, to: base, method: .post, headers: [
                field("Upload-Complete"): "?0", field("Upload-Length"): String(body.count), .contentType: "multipart/form-data; boundary=\(boundary)",
            ])
            let url = URL(string: created.header("Location") ?? "/", relativeTo: base)!.absoluteURL
            let append = { (offset: Int, end: Int) in
                try await client.send(.bytes(Array(body[offset..<end]), contentType: "application/partial-upload"), to: url, method: .patch, headers: [
                    field("Upload-Offset"): String(offset), field("Upload-Complete"): end == body.count ? "?1" : "?0",
                ])
            }
            let framed = try await append(0, head.count)
            let appended = try await append(head.count, head.count + file.count)
            let offset = Int(appended.header("Upload-Offset") ?? "") ?? 0
            return (created, framed, appended, try await append(offset, body.count))
        }
        #expect(created.status == 201 && created.header("Location")?.hasPrefix("/uploads/") == true)
        #expect(created.header("Upload-Limit")?.contains("max-age=") == true, "the page keeps an upload as long as its Upload-Limit's max-age says")
        #expect(framed.status == 204 && framed.header("Upload-Offset") == String(head.count), "the framing before the file is not acknowledged whole")
        #expect(appended.status == 204)
        let receipt = try answer.validate().decode(Receipt.self)
        #expect(receipt.fields == [.init(name: "title", value: "Grüße")])
        #expect(receipt.files.map(\.name) == ["files"] && receipt.files.map(\.filename) == ["a \"quoted\"\r\nname.bin"])
        #expect(receipt.files.first?.size == Int64(file.count) && receipt.files.first?.sha256 == sha256Hex(Data(file)))
    }

    @Test("the page puts what the server answers into the document as text only, and loads nothing from elsewhere")
    func pageIsSelfContained() {
        let html = UploadPage.html
        #expect(!html.contains("innerHTML") && !html.contains("outerHTML") && !html.contains("insertAdjacentHTML") && !html.contains("document.write"))
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("src="))
        #expect(UploadPage.contentSecurityPolicy.hasPrefix("default-src 'none';"))
        // The contract the page's elements keep, for tests and scripts (``UploadPage``).
        for attribute in ["data-file-name", "data-state", "data-offset", "data-resumed-from", "data-sha256", "role", "aria-valuenow"] {
            let name = attribute.hasPrefix("data-") ? attribute.dropFirst(5).split(separator: "-").enumerated()
                .map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined() : attribute
            #expect(html.contains("dataset.\(name)") || html.contains("\"\(attribute)\""), "the page's script sets no \(attribute)")
        }
    }

    @Test("with the page turned off GET / and HEAD / answer 405, as any request but a POST")
    func pageOff() async throws {
        let storage = try SampleDirectory()
        let (get, head) = try await withPageServer(ReceiverConfiguration(directory: storage.path), uploadPage: false) { base in
            (try await client.send(nil, to: base, method: .get), try await client.send(nil, to: base, method: .head))
        }
        #expect(get.status == 405 && get.header("Allow") == "POST" && get.header("Content-Type") == "application/json")
        #expect(get.text.contains("GET is not allowed"), "\(get.text)")
        #expect(head.status == 405)
    }

    @Test("formpost serve answers the page at GET /, and 405 there with --no-page")
    func serveCommand() async throws {
        let storage = try SampleDirectory()
        for arguments in [[], ["--no-page"]] {
            let port = try freePort()
            let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", storage.path] + arguments, stdout: .discard, stderr: .discard)
            defer { server.stop() }
            try await RawSocket.waitForListener(port: port, attempts: 400)
            let response = try await client.send(nil, to: URL(string: "http://127.0.0.1:\(port)/")!, method: .get)
            if arguments.isEmpty {
                #expect(response.status == 200 && response.body == Array(UploadPage.html.utf8))
            } else {
                #expect(response.status == 405 && response.header("Allow") == "POST")
            }
            try await offPool { server.stop() }
        }
    }
}
