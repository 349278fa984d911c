import Foundation
import FormPost
import FormPostServer
import FormPostURLSession
import Multipart
import Testing

/// On watchOS the default transport is URLSession's (FormPostURLSession's `FormPostClient()`
/// on `URLSessionTransport.shared`): `scripts/check-platforms` evaluates every `#if` for
/// watchOS and finds no default of FormPost's that reaches AsyncHTTPClient there. What runs
/// here is that both resumable uploaders work over that transport (FoundationNetworking
/// standing in for Apple's URLSession).
@Suite("Resumable uploads over the watchOS default transport")
struct WatchOSDefaultTransportTests {
    @Test("TusUploader and ResumableUploader over URLSessionTransport.shared store a 3 MiB file whole, in 1 MiB requests")
    func uploadersOverURLSession() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let path = try directory.file("data.bin", size: 3 << 20, seed: 17)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        let client = FormPostClient(transport: URLSessionTransport.shared)
        let (tus, draft) = try await withUploadServer(directory: uploads.path, resumableExpiry: .seconds(3600)) { port in
            let tus = try await TusUploader(client: client, chunkSize: 1 << 20, stateStore: nil)
                .upload(fileAt: path, to: URL(string: "http://127.0.0.1:\(port)/files")!)
            let draft = try await ResumableUploader(client: client, chunkSize: 1 << 20, stateStore: nil)
                .upload(fileAt: path, to: URL(string: "http://127.0.0.1:\(port)/upload")!, method: .put)
            return (tus, try draft.response.decode(Receipt.self))
        }
        #expect(tus.bytesSent == 3 << 20)
        #expect(draft.files.map(\.sha256) == [expected])
        let stored = try FileManager.default.contentsOfDirectory(atPath: uploads.path).filter { !$0.hasPrefix(".") }
        let digests = try stored.map { sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + $0))) }
        #expect(digests.filter { $0 == expected }.count == 2, "stored: \(stored)")
    }
}
