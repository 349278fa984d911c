import Foundation
import FormPost
import FormPostServer
import Logging
import Multipart
import Testing

/// Runs `formpost serve`'s server (an ``UploadServer``, with or without its upload page)
/// storing as `configuration` says, and `body` with its base URL (`http://127.0.0.1:PORT/`).
func withPageServer<T: Sendable>(_ configuration: ReceiverConfiguration, uploadPage: Bool = true,
                                 _ body: @Sendable (URL) async throws -> T) async throws -> T {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    let receiver = try UploadReceiver(configuration: configuration, logger: logger)
    let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, uploadPage: uploadPage)
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
        let (page, head, other, posted) = try await withPageServer(ReceiverConfiguration(directory: storage.path)) { base in
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

    @Test("the page puts what the server answers into the document as text only, and loads nothing from elsewhere")
    func pageIsSelfContained() {
        let html = UploadPage.html
        #expect(!html.contains("innerHTML") && !html.contains("outerHTML") && !html.contains("insertAdjacentHTML") && !html.contains("document.write"))
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("src="))
        #expect(UploadPage.contentSecurityPolicy.hasPrefix("default-src 'none';"))
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
        }
    }
}
