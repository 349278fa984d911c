import Foundation
import FormPostServer
import HTTPTypes
import Multipart
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// A request's connection as a test sees it: the interim answers sent on it, whether it was
/// ended, and a body that ends (as a closed connection's does) when it is.
final class RecordingConnection: ReceiverConnection {
    private let state = NIOLockedValueBox<(interim: [(HTTPResponse.Status, HTTPFields)], ended: Bool)>(([], false))
    private let onEnd: @Sendable () -> Void

    init(onEnd: @escaping @Sendable () -> Void = {}) {
        self.onEnd = onEnd
    }

    var isMultiplexedStream: Bool { false }
    var interim: [(HTTPResponse.Status, HTTPFields)] { state.withLockedValue { $0.interim } }
    var ended: Bool { state.withLockedValue { $0.ended } }

    func sendInterim(_ status: HTTPResponse.Status, fields: HTTPFields) async {
        state.withLockedValue { $0.interim.append((status, fields)) }
    }

    func end() {
        state.withLockedValue { $0.ended = true }
        onEnd()
    }
}

@Suite("The receivers answer a ReceiverRequest with no HTTP server in between")
struct ReceiverCoreTests {
    /// `bytes` as buffers of 1, 7, 4096 and 65,537 bytes in turn: every boundary of the form
    /// falls somewhere inside one.
    static func oddBuffers(_ bytes: [UInt8]) -> [ByteBuffer] {
        let sizes = [1, 7, 4096, 65_537]
        var buffers: [ByteBuffer] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + sizes[buffers.count % sizes.count])
            buffers.append(ByteBuffer(bytes: bytes[start..<end]))
            start = end
        }
        return buffers
    }

    /// `buffers`, then the end.
    static func stream(_ buffers: [ByteBuffer]) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            for buffer in buffers { continuation.yield(buffer) }
            continuation.finish()
        }
    }

    static func json(_ response: ReceiverResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    @Test("a form read from an AsyncSequence of odd-sized buffers: the receipt names the field and the file with its size and SHA-256, and the stored file has its bytes")
    func formWithoutServer() async throws {
        let samples = try SampleDirectory()
        let path = try samples.file("a b.bin", size: 300_000, seed: 3)
        var form = MultipartForm()
        form.append(name: "title", value: "Holiday")
        try form.append(name: "file", fileAt: path)
        let plan = try form.plan()
        let body = try await plan.encodedBytes()
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: samples.path + "/stored"))
        let request = ReceiverRequest(method: .post, path: "/upload", headers: [.contentType: plan.contentType, .contentLength: String(body.count)],
                                      body: ReceiverRequestBody(Self.stream(Self.oddBuffers(body))))
        let response = await receiver.respond(to: request)
        #expect(response.status == .ok && !response.endsExchange)
        #expect(response.headers[.contentType] == "application/json")
        let receipt = try Self.json(response)
        let fields = try #require(receipt["fields"] as? [[String: Any]])
        #expect(fields.count == 1 && fields.first?["name"] as? String == "title" && fields.first?["value"] as? String == "Holiday")
        let files = try #require(receipt["files"] as? [[String: Any]])
        let content = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(files.count == 1 && files.first?["filename"] as? String == "a b.bin" && files.first?["size"] as? Int == content.count)
        #expect(files.first?["sha256"] as? String == sha256Hex(content))
        let storedAs = try #require(files.first?["storedAs"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: samples.path + "/stored/" + storedAs)) == content)
    }

    @Test("a form declared past the limit is answered 413 before its body is read, and the answer ends the exchange (the client may still be sending); nothing is stored")
    func refusedBeforeTheBody() async throws {
        let samples = try SampleDirectory()
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: samples.path + "/stored", maxBodySize: 1000))
        let read = NIOLockedValueBox(false)
        let body = Self.stream([ByteBuffer(repeating: 0x61, count: 5000)]).map { buffer in
            read.withLockedValue { $0 = true }
            return buffer
        }
        let request = ReceiverRequest(method: .post, path: "/upload", headers: [.contentType: "multipart/form-data; boundary=x", .contentLength: "5000"],
                                      body: ReceiverRequestBody(body))
        let response = await receiver.respond(to: request)
        #expect(response.status == .contentTooLarge && response.endsExchange)
        #expect(try Self.json(response)["error"] as? String == "The upload exceeds the limit maxBodySize (1000 bytes or parts).")
        #expect(read.withLockedValue { $0 } == false, "the body was read")
        #expect(try FileManager.default.contentsOfDirectory(atPath: samples.path + "/stored").filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test("the IETF draft: a creation announces its upload in a 104 on the request's connection before the body is read; an append ends (ReceiverConnection.end) the request that holds the upload, then takes it")
    func draftThroughTheConnection() async throws {
        let samples = try SampleDirectory()
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: samples.path + "/stored"))
        let resumable = try ResumableUploadReceiver(receiver: receiver, basePath: "/uploads")
        let creating = RecordingConnection()
        let created = await resumable.respond(to: ReceiverRequest(
            method: .post, path: "/upload",
            headers: [HTTPField.Name("Upload-Draft-Interop-Version")!: "6", HTTPField.Name("Upload-Complete")!: "?0", .contentLength: "3"],
            body: ReceiverRequestBody(Self.stream([ByteBuffer(string: "abc")])), connection: creating))
        let location = try #require(created.headers[.location], "\(created.status) \(created.headers) \(String(buffer: created.body))")
        #expect(created.status == .created, "\(created.status)")
        #expect(creating.interim.map(\.0.code) == [104])
        #expect(creating.interim.first?.1[.location] == location)

        // An append that holds the upload and whose body does not end until its connection is
        // ended, then ends as a cut connection's does.
        let (stream, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        let holding = RecordingConnection { continuation.finish(throwing: ChannelError.eof) }
        continuation.yield(ByteBuffer(string: "def"))
        let taken = NIOLockedValueBox(false)
        let watched = stream.map { buffer in
            taken.withLockedValue { $0 = true }
            return buffer
        }
        let path = String(location.split(separator: "?")[0])
        let held = Task {
            await resumable.respond(to: ReceiverRequest(
                method: .patch, path: path,
                headers: [HTTPField.Name("Upload-Offset")!: "3", HTTPField.Name("Upload-Complete")!: "?0",
                          .contentType: "application/partial-upload"],
                body: ReceiverRequestBody(watched), connection: holding))
        }
        // Once the append has read its first bytes, it holds the upload.
        for _ in 0..<1000 where !taken.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(taken.withLockedValue { $0 }, "the append never read its body")
        #expect(!holding.ended)
        let asking = RecordingConnection()
        var state = await resumable.respond(to: ReceiverRequest(method: .head, path: path, connection: asking))
        let endedByReceiver = holding.ended
        continuation.finish()  // else a receiver that never ends it would leave the append waiting
        // On a loaded machine (the tests beside it keeping NIO's thread pool busy) the ended
        // append can take longer than the HEAD's patience (5 s) to let go: the HEAD is then
        // 423, and asked again, as a client asks.
        for _ in 0..<30 where state.status.code == 423 {
            try await Task.sleep(for: .seconds(1))
            state = await resumable.respond(to: ReceiverRequest(method: .head, path: path, connection: asking))
        }
        #expect(endedByReceiver, "the request holding the upload was not ended")
        #expect(!asking.ended)
        #expect(state.status.kind == .successful, "\(state.status)")
        #expect(state.headers[HTTPField.Name("Upload-Offset")!] == "6")
        _ = await held.value
    }
}
