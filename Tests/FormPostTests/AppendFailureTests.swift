#if os(Linux)
import Foundation
import FormPost
import FormPostServer
import Multipart
import Testing

/// Resumable uploads on a file system that fills up (a tmpfs the test mounts, as root, as
/// ``FullDiskTests`` does): after a write fails, nothing more of that request is written, the
/// offset is what reached the disk in order, and the stored SHA-256 is that of the stored
/// bytes; a form whose append meets a full disk goes on once there is room.
@Suite("Resumable uploads on a disk that fills")
struct AppendFailureTests {
    /// The protocol an upload speaks.
    enum Kind: String, CaseIterable, Sendable {
        case tus, draft
    }

    let client = FormPostClient()
    static func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
    static let uploadOffset = field("Upload-Offset"), uploadComplete = field("Upload-Complete")

    @Test("a disk that fills mid-append and has room again before the next batch: the append answers 507, nothing after the failed write is written, the offset is what was written in order, and the resumed upload is stored intact with its SHA-256",
          arguments: Kind.allCases)
    func diskFillsMidAppend(_ kind: Kind) async throws {
        let disk = try TmpfsMount(kibibytes: 4096)
        var random = SystemRandomNumberGenerator()
        let content = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let sent = 320 * 1024
        try await withUploadServer(directory: disk.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let url = try await create(kind, base: base, length: content.count)
            let data = disk.path + "/" + (kind == .tus ? ".tus/" : ".resumable/") + (url.split(separator: "/").last.map(String.init) ?? "") + ".data"
            let filler = try DiskFiller(in: disk.path, leaving: 100 * 1024)
            let watched = DurabilityTests.resolved(disk.path)
            FileSync.recorder.watch(watched)
            // The first batch (128 KiB) fills the disk after 100 KiB, while the next is gathered.
            let append = try StalledRequest(port: port, head: appendHead(kind, path: String(url.dropFirst(base.count)), length: content.count))
            try await offPool { append.send(content[..<sent]) }
            let stalled = try await settledSize(of: data, once: disk.path)
            #expect(stalled > 0 && stalled < 256 * 1024, "the disk filled mid-batch, at \(stalled) bytes")
            // Room again before the next batch: a writer that went on would write it after a hole.
            filler.remove()
            try await offPool { append.send(content[sent...]) }
            // The answer, unless the server's closing a connection it had not read to its end
            // reset it first; either way the append has ended once the server answered. Waited
            // for off the pool: the server in this process answers on it.
            let status = try await offPool { append.statusLine() }
            #expect(status.hasPrefix("HTTP/1.1 507") || status.isEmpty, "the append answered \(status)")
            if status.isEmpty { try await Task.sleep(for: .seconds(1)) }
            let offset = try #require(try await offset(kind, url))
            // The bytes written before the failure count only once synced.
            let syncs = FileSync.recorder.events(under: watched)
            #expect(syncs.contains(.data(DurabilityTests.resolved(data))), "the bytes written before the failure were not synced: \(syncs)")
            let kept = try Data(contentsOf: URL(fileURLWithPath: data))
            #expect(offset == Int64(kept.count) && offset <= stalled, "HEAD says \(offset), the data holds \(kept.count) bytes, \(stalled) were written before the failure")
            let inOrder = kept.count <= content.count && kept.elementsEqual(content[..<kept.count])
            #expect(inOrder, "the data holds the content in order, without a hole")
            let receipt = try await finish(kind, url, content: content, from: Int(offset))
            #expect(receipt.sha256 == sha256Hex(content), "the receipt's SHA-256 is the content's")
            #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: disk.path + "/" + receipt.storedAs))) == sha256Hex(content))
        }
    }

    @Test("a form whose append meets a full disk in a file's content answers 507, not for good: its offset is the form's bytes on disk, in order; once there is room, the resumed form answers its receipt")
    func formAppendOnFullDisk() async throws {
        let disk = try TmpfsMount(kibibytes: 4096)
        var random = SystemRandomNumberGenerator()
        let file = (0..<(600 * 1024)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let boundary = "formpost-full-disk"
        let form = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"clip\"; filename=\"clip.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            + file + Array("\r\n--\(boundary)--\r\n".utf8)
        try await withUploadServer(directory: disk.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let contentType = "multipart/form-data; boundary=\(boundary)"
            let created = try await draft(.post, base + "/upload", body: [], contentType: contentType, headers: [Self.uploadComplete: "?0"])
            #expect(created.status == 201, "\(created.text)")
            let url = base + (created.headers[.location] ?? "")
            // Room for some of the file's content, not all of it.
            let filler = try DiskFiller(in: disk.path, leaving: 200 * 1024)
            let refused = try await draft(.patch, url, body: form, headers: [Self.uploadOffset: "0", Self.uploadComplete: "?1"])
            #expect(refused.status == 507, "\(refused.text)")
            #expect(refused.headers[Self.uploadComplete] != "?1", "a storage failure is no final answer")
            filler.remove()
            let offset = try #require(try await draft(.head, url).headers[Self.uploadOffset].flatMap { Int($0) })
            #expect(offset > 0 && offset < form.count, "the offset after the failure is \(offset)")
            let done = try await draft(.patch, url, body: Array(form[offset...]), headers: [Self.uploadOffset: String(offset), Self.uploadComplete: "?1"])
            #expect(done.status == 200 && done.headers[Self.uploadComplete] == "?1", "\(done.text)")
            let receipt = try done.decode(Receipt.self)
            #expect(receipt.fields == [.init(name: "note", value: "hello")])
            let stored = try #require(receipt.files.first)
            #expect(stored.filename == "clip.bin" && stored.sha256 == sha256Hex(file))
            #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: disk.path + "/" + stored.storedAs))) == sha256Hex(file))
            #expect(try await draft(.get, url).body == done.body, "the receipt is the kept answer")
        }
    }

    // MARK: - Requests

    func tus(_ method: String, _ url: String, body: [UInt8]? = nil, headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Tus-Resumable"): "1.0.0"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: "application/offset+octet-stream") }, to: URL(string: url)!,
                                     method: RequestMethod(rawValue: method), headers: all)
    }

    func draft(_ method: RequestMethod, _ url: String, body: [UInt8]? = nil, contentType: String = "application/partial-upload",
               headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Upload-Draft-Interop-Version"): "8"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: contentType) }, to: URL(string: url)!, method: method, headers: all)
    }

    /// Creates an upload of `length` bytes (a file, not a form); returns its URL.
    func create(_ kind: Kind, base: String, length: Int) async throws -> String {
        let created = switch kind {
        case .tus: try await tus("POST", base + "/files", headers: [Self.field("Upload-Length"): String(length)])
        case .draft: try await draft(.post, base + "/upload", body: [], contentType: "application/octet-stream",
                                     headers: [Self.uploadComplete: "?0", Self.field("Upload-Length"): String(length)])
        }
        #expect(created.status == 201, "\(created.text)")
        return base + (created.headers[.location] ?? "")
    }

    /// The head of an append of the whole `length` bytes from offset 0 (the last, for the draft).
    func appendHead(_ kind: Kind, path: String, length: Int) -> String {
        switch kind {
        case .tus:
            "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                + "Content-Type: application/offset+octet-stream\r\nContent-Length: \(length)\r\n\r\n"
        case .draft:
            "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: 8\r\nUpload-Offset: 0\r\nUpload-Complete: ?1\r\n"
                + "Content-Type: application/partial-upload\r\nContent-Length: \(length)\r\n\r\n"
        }
    }

    /// The offset `HEAD` answers.
    func offset(_ kind: Kind, _ url: String) async throws -> Int64? {
        let head = switch kind {
        case .tus: try await tus("HEAD", url)
        case .draft: try await draft(.head, url)
        }
        return head.headers[Self.uploadOffset].flatMap { Int64($0) }
    }

    /// Appends the rest of `content` from `offset`, completing the upload; returns the stored file.
    func finish(_ kind: Kind, _ url: String, content: [UInt8], from offset: Int) async throws -> Receipt.File {
        let rest = Array(content[offset...])
        switch kind {
        case .tus:
            let appended = try await tus("PATCH", url, body: rest, headers: [Self.uploadOffset: String(offset)])
            #expect(appended.status == 204, "\(appended.text)")
            let state = try await tus("GET", url).validate().decode(TusState.self)
            return try #require(state.receipt?.files.first)
        case .draft:
            let done = try await draft(.patch, url, body: rest, headers: [Self.uploadOffset: String(offset), Self.uploadComplete: "?1"])
            #expect(done.status == 200, "\(done.text)")
            return try #require(try done.decode(Receipt.self).files.first)
        }
    }

    /// The size of the file at `path` once it has stopped changing for half a second and the
    /// file system of `full` has no room left (a write met the full disk): a receiver slowed
    /// by a busy machine may pause between two batches, the first of which still fitted.
    func settledSize(of path: String, once full: String) async throws -> Int64 {
        var last: Int64 = -1
        var unchanged = 0
        for _ in 0..<400 where unchanged < 10 || Self.freeBytes(full) >= 16 * 1024 {
            try await Task.sleep(for: .milliseconds(50))
            let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
            unchanged = size == last && size > 0 ? unchanged + 1 : 0
            last = size
        }
        return last
    }

    /// The bytes free on the file system of `path`.
    static func freeBytes(_ path: String) -> Int {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return 0 }
        return Int(status.f_bavail) * Int(status.f_frsize)
    }
}
#endif
