import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FormPost
import FormPostFoundation
import FormPostURLSession
import FormPostServer
import Logging
import Multipart
import Synchronization
import Testing

/// The receiver against what a hostile or unlucky client does: too many fields, a body
/// that goes on after the form, a crash that left partial files, a disk that fails.
@Suite("Receiver hardening")
struct ReceiverHardeningTests {
    let client = FormPostClient()

    @Test("fields are limited in total, not only one by one")
    func totalFieldBytes() async throws {
        var form = MultipartForm()
        for index in 0..<20 { form.append(name: "f\(index)", value: String(repeating: "x", count: 300_000)) }
        let manyFields = form
        let server = try TestServer()
        let response = try await server.run(configuration: ReceiverConfiguration(directory: server.directory)) { base in
            try await client.upload(manyFields, to: base.appendingPathComponent("upload"))
        }
        #expect(response.status == 413)
        #expect(response.text.contains("maxTotalFieldBytes"), "\(response.text)")
    }

    @Test("100 MiB of garbage under a multipart content type answers 400 within its first bytes and stores nothing")
    func garbage() async throws {
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        let garbage = Array(random.readData(ofLength: 100 << 20))
        let body = RequestBody.bytes(garbage, contentType: "multipart/form-data; boundary=\(UUID().uuidString)")
        let sent = Mutex(Int64(0))
        let server = try TestServer()
        let response = try await server.run { base in
            try await client.send(body, to: base.appendingPathComponent("upload")) { progress in sent.withLock { $0 = progress.bytesSent } }
        }
        #expect(response.status == 400)
        #expect(response.text.contains("it is not a form with that boundary"), "\(response.text)")
        #expect(sent.withLock { $0 } < 32 << 20, "the client sent \(sent.withLock { $0 }) bytes before the server refused the body")
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.directory).isEmpty)
    }

    @Test("reading stops at the closing delimiter: the answer comes at once, then the connection closes")
    func stopsAtClosingDelimiter() async throws {
        let server = try TestServer()
        let (answer, closed) = try await server.run { base in
            try await offPool { () -> (String, Bool) in
                let form = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n"
                // The head promises 100 MB; the client sends the form and a little epilogue, then waits.
                let head = "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000000\r\n\r\n"
                let connection = try HeldConnection(port: base.port ?? 0)
                try connection.send(Array((head + form + String(repeating: "epilogue ", count: 1000)).utf8))
                // Generous: other suites load the machine meanwhile; a server that keeps the
                // connection open never closes it, however long the wait.
                return try connection.readUntilClosed(seconds: 30)
            }
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(answer.contains(#"{"fields":[{"name":"a","value":"1"}],"files":[]}"#))
        #expect(closed, "the server kept the connection of a client that was still sending")
    }

    @Test("partial files a crashed server left are removed at start; recent ones are left alone")
    func sweepsStalePartialFiles() throws {
        let directory = try SampleDirectory()
        let stale = directory.path + "/.partial-0123456789abcdef0123456789abcdef"
        let recent = directory.path + "/.partial-fedcba9876543210fedcba9876543210"
        let kept = directory.path + "/stored"
        for path in [stale, recent, kept] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: stale)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: kept)
        _ = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory.path), logger: Logger(label: "test"))
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: recent))
        #expect(FileManager.default.fileExists(atPath: kept))
    }

    @Test("a storage failure answers 500 with a generic message; the detail is not sent")
    func genericStorageError() async throws {
        let server = try TestServer()
        var form = MultipartForm()
        form.append(name: "f", bytes: [1, 2, 3], filename: "f.bin")
        let fileForm = form
        let response = try await server.run { base in
            try FileManager.default.removeItem(atPath: server.directory)
            return try await client.upload(fileForm, to: base.appendingPathComponent("upload"))
        }
        #expect(response.status == 500)
        #expect(response.text == #"{"error":"The upload could not be stored."}"#)
        #expect(!response.text.contains(server.directory))
    }

    @Test("stored files are readable by their owner only, unless the operator chooses a mode", arguments: [(nil, 0o600), (0o640, 0o640)] as [(UInt16?, Int)])
    func fileModes(configured: UInt16?, expected: Int) async throws {
        let server = try TestServer()
        var configuration = ReceiverConfiguration(directory: server.directory)
        if let configured { configuration.storedFileMode = configured }
        var form = MultipartForm()
        form.append(name: "f", bytes: [1, 2, 3], filename: "f.bin")
        let fileForm = form
        let finalConfiguration = configuration
        let receipt = try await server.run(configuration: finalConfiguration) { base in
            try await client.upload(fileForm, to: base.appendingPathComponent("upload")).validate().decode(Receipt.self)
        }
        let stored = try #require(receipt.files.first?.storedAs)
        let permissions = try FileManager.default.attributesOfItem(atPath: server.directory + "/" + stored)[.posixPermissions] as? Int
        #expect(permissions == expected)
    }
}

/// A TCP connection to 127.0.0.1 kept open by the test, to see what the server does with it.
final class HeldConnection: Sendable {
    private let descriptor: Int32

    init(port: Int) throws {
        guard let descriptor = try RawSocket.connect(port: port) else { throw Subprocess.Failure(description: "connect failed") }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) throws {
        let sent = bytes.withUnsafeBytes { POSIX.send(descriptor, $0) }
        guard sent == bytes.count else { throw Subprocess.Failure(description: "send failed") }
    }

    /// Whether the server has closed the connection by now (reads and drops what it sent; never waits).
    var isClosedByPeer: Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }
            return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        }
    }

    /// Everything the server sends within `seconds`, and whether it closed the connection by then.
    func readUntilClosed(seconds: Int) throws -> (String, Bool) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(Double(seconds))
        while Date() < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if count > 0 { received += buffer[0..<count] }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                return (String(decoding: received, as: UTF8.self), true)
            }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}
