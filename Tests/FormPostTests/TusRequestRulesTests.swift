import Foundation
import FormPost
import FormPostServer
import Multipart
import Testing

/// tus 1.0's rules the receiver keeps besides appends: `X-HTTP-Method-Override` on a
/// `POST`, distinct `Upload-Metadata` keys, and `DELETE` acting on the state read under the
/// upload's lock; on Hummingbird's ``UploadServer`` and on a Vapor app alike.
@Suite("tus: method override, metadata keys, DELETE under the lock")
struct TusRequestRulesTests {
    let client = FormPostClient()
    static func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
    static let uploadOffset = field("Upload-Offset"), override = field("X-HTTP-Method-Override")

    func request(_ method: RequestMethod, _ url: String, body: [UInt8]? = nil, headers: HTTPFields = [:]) async throws -> UploadResponse {
        var all: HTTPFields = [Self.field("Tus-Resumable"): "1.0.0"]
        all.append(contentsOf: headers)
        return try await client.send(body.map { .bytes($0, contentType: "application/offset+octet-stream") }, to: URL(string: url)!,
                                     method: method, headers: all)
    }

    func create(_ base: String, length: Int, metadata: String? = nil) async throws -> UploadResponse {
        var headers: HTTPFields = [Self.field("Upload-Length"): String(length)]
        if let metadata { headers[Self.field("Upload-Metadata")] = metadata }
        return try await request(.post, base + "/files", headers: headers)
    }

    @Test("a POST with X-HTTP-Method-Override is taken for the method it names: PATCH appends, HEAD tells the offset, DELETE ends the upload; an override that is no method answers 400", arguments: ReceiverAdapter.allCases)
    func methodOverride(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let url = base + (try await create(base, length: 10).headers[.location] ?? "")
            #expect(try await request(.post, url, body: [1, 2, 3, 4], headers: [Self.uploadOffset: "0"]).status == 405, "a POST on an upload without override")
            let appended = try await request(.post, url, body: [1, 2, 3, 4], headers: [Self.override: "PATCH", Self.uploadOffset: "0"])
            #expect(appended.status == 204 && appended.headers[Self.uploadOffset] == "4", "\(appended.text)")
            let head = try await request(.post, url, headers: [Self.override: "HEAD"])
            #expect(head.status == 200 && head.headers[Self.uploadOffset] == "4")
            #expect(try await request(.post, url, headers: [Self.override: "NOT A METHOD"]).status == 400)
            #expect(try await request(.post, url, headers: [Self.override: "DELETE"]).status == 204)
            #expect(try await request(.head, url).status == 404)
        }
    }

    @Test("Upload-Metadata with a key twice answers 400; distinct keys (one without a value) are taken", arguments: ReceiverAdapter.allCases)
    func duplicateMetadataKeys(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            let a = Data("a.bin".utf8).base64EncodedString(), b = Data("b.bin".utf8).base64EncodedString()
            let twice = try await create(base, length: 10, metadata: "filename \(a),filename \(b)")
            #expect(twice.status == 400, "\(twice.text)")
            #expect(try await create(base, length: 10, metadata: "filename \(a), flag").status == 201)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path + "/.tus").count == 2, "one upload, its state and data")
    }

    @Test("a DELETE racing the append that completes the upload answers 423 or ends the upload, before the append (which then finds none) or after it (the stored file stays): exactly one file is stored for each append answered 204, none for the others", arguments: ReceiverAdapter.allCases)
    func deleteRacingCompletion(adapter: ReceiverAdapter) async throws {
        let uploads = try SampleDirectory()
        let rounds = 40, width = 8
        let (kept, completed) = try await withUploadServer(on: adapter, directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let base = "http://127.0.0.1:\(port)"
            var kept: Set<String> = []
            var completed = 0
            for _ in 0..<rounds {
                var urls: [String] = []
                for _ in 0..<width { urls.append(base + (try await create(base, length: 1).headers[.location] ?? "")) }
                let outcomes = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    for url in urls {
                        group.addTask { ("PATCH", try await request(.patch, url, body: [7], headers: [Self.uploadOffset: "0"]).status) }
                        group.addTask { ("DELETE", try await request(.delete, url).status) }
                    }
                    return try await group.reduce(into: [(String, Int)]()) { $0.append($1) }
                }
                #expect(outcomes.allSatisfy { [204, 404, 423].contains($0.1) }, "\(outcomes.map(\.1))")
                for (method, status) in outcomes where method == "PATCH" && status == 204 { completed += 1 }
                for url in urls {
                    let state = try await request(.get, url)
                    guard state.status == 200, let stored = try state.decode(TusState.self).receipt?.files.first?.storedAs else { continue }
                    kept.insert(stored)
                }
            }
            return (kept, completed)
        }
        let stored = Set(try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") })
        #expect(stored.count == completed, "\(stored.count) files stored for \(completed) appends answered 204")
        #expect(kept.isSubset(of: stored), "uploads naming a file not stored: \(kept.subtracting(stored).count)")
    }
}
