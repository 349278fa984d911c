import Foundation
import FormPost
import Testing

extension ResumableClientTests {
    // The stall timeout (30 s) is far beyond the answer timeout (1 s): the request must be
    // given up on for its answer, not for a stall. It is written in parts (file regions of at
    // most 16 MiB), the last of which the stall watch must see.
    @Test("a server that reads an append whole and never answers it: the append is given up on after answerTimeout, not the far longer stallTimeout")
    func appendNeverAnswered() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("data.bin", size: 20 << 20, seed: 5)
        let server = try await SilentTusServer(in: directory)
        defer { server.stop() }
        let uploader = TusUploader(chunkSize: 20 << 20, retry: .none, stateStore: nil, stallTimeout: .seconds(30), answerTimeout: .seconds(1))
        let outcome = try await withThrowingTaskGroup(of: Result<ResumableUploadResult, any Error>?.self) { group in
            group.addTask {
                do {
                    return .success(try await uploader.upload(fileAt: file, to: URL(string: "http://127.0.0.1:\(server.port)/files")!))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(120))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard case .failure(let error) = try #require(outcome, "the upload was still waiting for an answer after two minutes") else {
            Issue.record("the upload succeeded against a server that never answers")
            return
        }
        #expect(error as? ResumableUploadError == .retriesExhausted(attempts: 1, lastError: "no answer came within 1.0 seconds of the request's end"))
        #expect(try server.patches() == [20 << 20], "the append was read whole")
    }
}
