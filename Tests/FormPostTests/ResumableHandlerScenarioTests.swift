import Foundation
import Multipart
import Testing

/// The receivers' requests as clients send them, the same on every store: a form, an
/// IETF-draft upload in two requests, a tus upload removed by `DELETE` — spoken by `curl` to
/// `formpost serve` on a directory and on moto here, and on Ceph's RADOS Gateway in
/// `CephGatewayTests` (each scenario a static function of the store). On a bucket, the
/// sizes make a part and a tail.
@Suite("The receivers' scenarios on every store", .timeLimit(.minutes(5)))
struct ResumableHandlerScenarioTests {
    typealias Helpers = TusCreationExtensionTests
    static let draft = ["-H", "Upload-Draft-Interop-Version: 6"]

    /// A form of a field and a 9 MiB file: answered its receipt, the file stored byte-exact.
    static func form(_ storage: Helpers.Storage) async throws {
        try await Helpers.withServe(storage) { serve in
            let bytes = try Helpers.randomBytes(9 << 20)
            let file = try Helpers.random(serve.samples, "photo.bin", bytes)
            let answer = try await offPool { try SignedUploadServeTests.curl(["-F", "title=Hi", "-F", "photo=@" + file, serve.base + "/upload"]) }
            #expect(answer.status == 200, "\(answer.body)")
            let receipt = try JSONDecoder().decode(Receipt.self, from: Data(answer.body.utf8))
            #expect(receipt.fields.first?.value == "Hi" && receipt.files.first?.sha256 == sha256Hex(bytes), "\(answer.body)")
            let stored = try #require(receipt.files.first?.storedAs)
            #expect(try await serve.storedSHA256(stored) == sha256Hex(bytes), "the stored bytes are not those sent")
        }
    }

    /// An IETF-draft upload created with its first 3 MiB (`Upload-Complete: ?0`), its `HEAD`
    /// at that offset, completed by a `PATCH` of the rest: the receipt's file is the 10 MiB
    /// sent, stored byte-exact.
    static func draftInTwoRequests(_ storage: Helpers.Storage) async throws {
        try await Helpers.withServe(storage) { serve in
            let size = 10 << 20, split = 3 << 20
            let bytes = try Helpers.randomBytes(size)
            let first = try Helpers.random(serve.samples, "first", bytes.prefix(split))
            let rest = try Helpers.random(serve.samples, "rest", bytes.dropFirst(split))
            let created = try await offPool {
                try SignedUploadServeTests.curl(["-D", "-", "-X", "POST"] + draft + ["-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(size)",
                                                 "--data-binary", "@" + first, serve.base + "/upload"])
            }
            #expect(created.status == 201, "\(created.body)")
            let location = try #require(ObjectStorageResumableTests.location(in: created), "\(created.body)")
            let head = try await offPool { try SignedUploadServeTests.curl(["-I"] + draft + [serve.base + location]) }
            #expect(head.body.lowercased().contains("upload-offset: \(split)") && head.body.lowercased().contains("upload-complete: ?0"), "\(head.body)")
            let completed = try await offPool {
                try SignedUploadServeTests.curl(["-X", "PATCH"] + draft + ["-H", "Upload-Offset: \(split)", "-H", "Upload-Complete: ?1",
                                                 "-H", "Content-Type: application/partial-upload", "--data-binary", "@" + rest, serve.base + location])
            }
            #expect(completed.status == 200, "\(completed.body)")
            let receipt = try JSONDecoder().decode(Receipt.self, from: Data(completed.body.utf8))
            #expect(receipt.files.first?.sha256 == sha256Hex(bytes) && receipt.files.first?.size == Int64(size), "\(completed.body)")
            #expect(try await serve.storedSHA256(try #require(receipt.files.first?.storedAs)) == sha256Hex(bytes))
        }
    }

    /// A tus upload of 12 MiB, 9 MiB of it appended, then removed by `DELETE` (204): `HEAD`
    /// and `PATCH` answer 404 after, and nothing of it is left — no stored file, no bytes (the
    /// data file; in a bucket, no tail and no multipart upload).
    static func tusDeleted(_ storage: Helpers.Storage) async throws {
        try await Helpers.withServe(storage) { serve in
            let bytes = try Helpers.randomBytes(9 << 20)
            let file = try Helpers.random(serve.samples, "first", bytes)
            let created = try await Helpers.curl(Helpers.tus + ["-X", "POST", "-H", "Upload-Length: \(12 << 20)", serve.base + "/files"])
            let url = serve.base + (try #require(created.headers["location"], "creation answered \(created.status)"))
            let appended = try await Helpers.curl(Helpers.tus + Helpers.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "@" + file, url])
            #expect(appended.status == 204 && appended.headers["upload-offset"] == String(bytes.count), "\(appended.status) \(appended.body)")
            #expect(try await serve.uploadBytesLeft().isEmpty == false, "the appended bytes are nowhere")
            let deleted = try await Helpers.curl(Helpers.tus + ["-X", "DELETE", url])
            #expect(deleted.status == 204, "\(deleted.status) \(deleted.body)")
            #expect(try await Helpers.curl(Helpers.tus + ["-I", url]).status == 404)
            let again = try await Helpers.curl(Helpers.tus + Helpers.data + ["-X", "PATCH", "-H", "Upload-Offset: \(bytes.count)", "--data-binary", "x", url])
            #expect(again.status == 404, "\(again.status)")
            let left = try await serve.uploadBytesLeft(), stored = try await serve.storedFiles()
            #expect(left.isEmpty, "left after DELETE: \(left)")
            #expect(stored.isEmpty, "stored after DELETE: \(stored)")
        }
    }

    @Test("a form of a field and a 9 MiB file: its receipt answered, the file stored byte-exact", arguments: Helpers.Storage.allCases)
    func form(storage: Helpers.Storage) async throws {
        try await Self.form(storage)
    }

    @Test("an IETF-draft upload created with its first 3 MiB, HEAD at that offset, completed by a PATCH of the rest: stored byte-exact", arguments: Helpers.Storage.allCases)
    func draftInTwoRequests(storage: Helpers.Storage) async throws {
        try await Self.draftInTwoRequests(storage)
    }

    @Test("a tus upload removed by DELETE after 9 MiB of its 12: HEAD and PATCH then answer 404, and nothing of it is left", arguments: Helpers.Storage.allCases)
    func tusDeleted(storage: Helpers.Storage) async throws {
        try await Self.tusDeleted(storage)
    }
}
