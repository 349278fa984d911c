import Crypto
import Foundation
import FormPost
import Multipart
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// tus appends with `Upload-Checksum` across a `formpost serve` killed with SIGKILL while
/// one is written: none of its bytes count when the server is back.
@Suite("tus: an unchecked append across a server killed mid-append")
struct TusUnverifiedRestartTests {
    let client = FormPostClient()
    static func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
    static let uploadOffset = field("Upload-Offset"), uploadChecksum = field("Upload-Checksum")

    /// Starts `formpost serve` on `port` storing into `directory`; returns once it accepts.
    static func serve(port: Int, directory: String) throws -> ChildProcess {
        let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", directory], stdout: .discard, stderr: .discard)
        try RawSocket.waitForListenerBlocking(port: port, attempts: 400)
        return server
    }

    func request(_ method: RequestMethod, _ url: String, body: [UInt8]? = nil, headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Tus-Resumable"): "1.0.0"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: "application/offset+octet-stream") }, to: URL(string: url)!,
                                     method: method, headers: all)
    }

    static func checksum(_ bytes: some DataProtocol) -> String { "sha256 " + Data(SHA256.hash(data: bytes)).base64EncodedString() }

    @Test("a server killed while an append with Upload-Checksum is written restarts with none of that append counted: HEAD answers the offset checked before, and the upload resumed from it is stored intact")
    func killedDuringCheckedAppend() async throws {
        let uploads = try SampleDirectory()
        var random = SystemRandomNumberGenerator()
        let content = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let checked = 256 * 1024
        let rest = content[checked...]
        let port = try freePort()
        let base = "http://127.0.0.1:\(port)"
        let first = try await offPool { try Self.serve(port: port, directory: uploads.path) }
        let created = try await request(.post, base + "/files", headers: [Self.field("Upload-Length"): String(content.count)])
        let url = base + (created.headers[.location] ?? "")
        let appended = try await request(.patch, url, body: Array(content[..<checked]), headers: [Self.uploadOffset: "0", Self.uploadChecksum: Self.checksum(content[..<checked])])
        #expect(appended.status == 204 && appended.headers[Self.uploadOffset] == String(checked))
        // The next append, with its checksum, stalls after 600 KiB of its 768; the server is killed
        // once more than 256 KiB of it reached the disk.
        let path = String(url.dropFirst(base.count))
        let append = try StalledRequest(port: port, head: "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: \(checked)\r\n"
            + "Upload-Checksum: \(Self.checksum(rest))\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: \(rest.count)\r\n\r\n")
        try await offPool { append.send(rest.prefix(600 * 1024)) }
        try await offPool {
            waitUntilStored(in: uploads.path + "/.tus", moreThan: Int64(checked + 256 * 1024))
            kill(first.pid, SIGKILL)
            _ = try? first.finish()
        }
        let second = try await offPool { try Self.serve(port: port, directory: uploads.path) }
        defer { second.stop() }
        let offset = try await request(.head, url).headers[Self.uploadOffset]
        #expect(offset == String(checked), "after the restart, HEAD says \(offset ?? "nothing")")
        let resumed = try await request(.patch, url, body: Array(rest), headers: [Self.uploadOffset: String(checked), Self.uploadChecksum: Self.checksum(rest)])
        #expect(resumed.status == 204 && resumed.headers[Self.uploadOffset] == String(content.count), "\(resumed.status) \(resumed.text)")
        let state = try await request(.get, url).validate().decode(TusState.self)
        let file = try #require(state.receipt?.files.first)
        #expect(file.sha256 == sha256Hex(content))
        #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs))) == sha256Hex(content))
        try await offPool { second.stop() }
    }
}
