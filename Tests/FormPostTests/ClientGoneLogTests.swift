import Foundation
import FormPost
import FormPostServer
import Logging
import Synchronization
import Testing

/// A client whose connection ends in the middle of its body is the client's doing: the
/// receivers log it at notice, not as an error of their own — a form's upload "ended by the
/// client", a resumable append "cut at" the bytes it kept.
@Suite("A client gone mid-body is logged at notice")
struct ClientGoneLogTests {
    @Test("a connection closed mid-body: a notice naming the request, no error", arguments: ["plain", "tus", "draft"])
    func cutConnectionIsANotice(kind: String) async throws {
        let directory = try SampleDirectory()
        let log = CapturedLog()
        var logger = Logger(label: "test") { _ in log }
        logger.logLevel = .info
        try await withUploadServer(directory: directory.path, resumableExpiry: .seconds(3600), logger: logger) { port in
            var target = "/upload"
            if kind != "plain" {
                // A resumable upload of 1 MiB to append to, created empty.
                let creation: HTTPFields = kind == "tus"
                    ? [HTTPField.Name("Tus-Resumable")!: "1.0.0", HTTPField.Name("Upload-Length")!: "1048576"]
                    : [HTTPField.Name("Upload-Draft-Interop-Version")!: "8", HTTPField.Name("Upload-Complete")!: "?0", HTTPField.Name("Upload-Length")!: "1048576"]
                let created = try await FormPostClient().send(.bytes([], contentType: "application/octet-stream"),
                                                              to: URL(string: "http://127.0.0.1:\(port)\(kind == "tus" ? "/files" : "/upload")")!, headers: creation)
                target = try #require(created.headers[.location], "creation answered \(created.status)")
            }
            let head = switch kind {
            case "plain":
                "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=cut\r\nContent-Length: 1048576\r\n\r\n"
                    + "--cut\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n"
            case "tus":
                "PATCH \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                    + "Content-Type: application/offset+octet-stream\r\nContent-Length: 1048576\r\n\r\n"
            default:
                "PATCH \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: 8\r\nUpload-Offset: 0\r\nUpload-Complete: ?1\r\n"
                    + "Content-Type: application/partial-upload\r\nContent-Length: 1048576\r\n\r\n"
            }
            let socket = try #require(try RawSocket.connect(port: port))
            let partial = Array(head.utf8) + [UInt8](repeating: 0x61, count: 64 << 10)
            _ = partial.withUnsafeBytes { POSIX.send(socket, $0) }
            try await Task.sleep(for: .milliseconds(200))
            close(socket)
            for _ in 0..<200 where !log.entries.contains(where: { $0.level == .notice }) {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let entries = log.entries
        let said = kind == "plain" ? "ended by the client" : "cut at 65536 bytes"
        let notices = entries.filter { $0.level == .notice && $0.message.contains(said) }
        let errors = entries.filter { $0.level >= .error }
        #expect(notices.count == 1, "notices: \(notices.map(\.message)); all: \(entries.map { "\($0.level) \($0.message)" })")
        #expect(errors.isEmpty, "errors logged: \(errors.map(\.message))")
    }
}
