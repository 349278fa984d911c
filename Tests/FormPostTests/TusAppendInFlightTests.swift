import Foundation
import FormPost
import HTTPTypes
import Testing

/// A tus `HEAD` acknowledges only bytes on the disk: while an append is written — its bytes
/// perhaps in the page cache alone — the offset is where it began; once it ends (its bytes
/// synced), what it kept.
@Suite("tus HEAD during an append")
struct TusAppendInFlightTests {
    static let tusResumable = HTTPField.Name("Tus-Resumable")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!

    @Test("HEAD while an append is written answers where the append began; once the append ends, the bytes it synced")
    func headDuringAppend() async throws {
        let uploads = try SampleDirectory()
        let length = 1 << 20
        let sent = 600 * 1024
        let client = FormPostClient()
        let (during, after) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let created = try await client.send(nil, to: URL(string: base + "/files")!, method: .post,
                                                headers: [Self.tusResumable: "1.0.0", HTTPField.Name("Upload-Length")!: String(length)])
            let path = created.headers[.location] ?? ""
            #expect(created.status == 201 && !path.isEmpty, "\(created.status)")
            let during: UploadResponse
            do {
                // An append of the whole length that sends 600 KiB and waits.
                let append = try StalledRequest(port: port, head: "PATCH \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                    + "Content-Type: application/offset+octet-stream\r\nContent-Length: \(length)\r\n\r\n")
                try await offPool { append.send([UInt8](repeating: 7, count: sent)[...]) }
                try await offPool { waitUntilStored(in: uploads.path + "/.tus", moreThan: 256 * 1024) }
                during = try await client.send(nil, to: URL(string: base + path)!, method: .head, headers: [Self.tusResumable: "1.0.0"])
                // The client goes away (its socket closes here): the append ends with what
                // reached the disk, synced.
                withExtendedLifetime(append) {}
            }
            var after: String?
            for _ in 0..<600 {
                try await Task.sleep(for: .milliseconds(100))
                after = try await client.send(nil, to: URL(string: base + path)!, method: .head, headers: [Self.tusResumable: "1.0.0"]).headers[Self.uploadOffset]
                if after != "0" { break }
            }
            return (during.headers[Self.uploadOffset], after)
        }
        #expect(during == "0", "HEAD during the append answered \(during ?? "nothing")")
        #expect(after.flatMap(Int.init).map { $0 > 256 * 1024 && $0 <= sent } == true, "after the append ended HEAD answered \(after ?? "nothing")")
    }
}
