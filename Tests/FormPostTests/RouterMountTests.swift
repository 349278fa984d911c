import Crypto
import Foundation
import FormPost
import FormPostServer
import Hummingbird
import Logging
import Multipart
import NIOCore
import Testing

/// An application's own request context, as a Hummingbird user has one.
struct AppRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// Something of the application's own.
    var tenant = "acme"

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// What the `/parts` route answers for each part it read.
struct PartSummary: Codable, Equatable {
    var name: String
    var filename: String?
    var size: Int
    var sha256: String
    var buffers: Int
}

@Suite("The receiver in an application's own router")
struct RouterMountTests {
    let client = FormPostClient()

    /// Runs an application whose router mounts the receiver at `POST /upload` and reads
    /// parts itself at `POST /parts` (every part, hashed as it streams) and `POST /last`
    /// (only the value of the last field, skipping the rest), then `body` with its base URL.
    func withApplication<T: Sendable>(directory: String, _ body: @Sendable (URL) async throws -> T) async throws -> T {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: directory), logger: logger)
        let router = Router(context: AppRequestContext.self)
        router.post("upload") { request, context in
            await receiver.respond(to: request, context: context)
        }
        router.post("parts") { request, context -> Response in
            var summaries: [PartSummary] = []
            do {
                for try await part in try request.formParts() {
                    var hasher = SHA256()
                    var size = 0
                    var buffers = 0
                    for try await buffer in part.body {
                        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                        size += buffer.readableBytes
                        buffers += 1
                    }
                    let digest = hexString(hasher.finalize())
                    summaries.append(PartSummary(name: part.name, filename: part.filename, size: size, sha256: digest, buffers: buffers))
                }
            } catch let error as MultipartError {
                return Response(status: .badRequest, body: .init(byteBuffer: ByteBuffer(string: "\(context.tenant): \(error)")))
            }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(summaries))))
        }
        router.post("last") { request, _ -> String in
            var last = ""
            for try await part in try request.formParts() where part.filename == nil {
                last = String(buffer: try await part.body.collect(upTo: 1024))
            }
            return last
        }
        return try await whileRunning({ onStarted in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onStarted($0.localAddress?.port ?? 0) }, logger: logger)
        }, { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) })
    }

    func form(_ directory: SampleDirectory) throws -> MultipartForm {
        var form = MultipartForm()
        form.append(name: "title", value: "Zoë's \"photos\"")
        try form.append(name: "big", fileAt: try directory.file("big.bin", size: 3 << 20, seed: 7))
        form.append(name: "small", bytes: Array("hello".utf8), filename: "a b.txt")
        form.append(name: "last", value: "the end")
        return form
    }

    @Test("mounted as one route with the application's context, the receiver stores and answers as `formpost serve` does")
    func mountedReceiver() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let sent = try form(directory)
        let expected = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/big.bin"))
        let receipt = try await withApplication(directory: uploads.path) { base in
            try await client.upload(sent, to: base.appendingPathComponent("upload"), strategy: .streaming).validate().decode(Receipt.self)
        }
        #expect(receipt.fields.map(\.value) == ["Zoë's \"photos\"", "the end"])
        #expect(receipt.files.map(\.sha256) == [sha256Hex(expected), sha256Hex(Array("hello".utf8))])
        for file in receipt.files {
            let stored = try Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + file.storedAs))
            #expect(sha256Hex(stored) == file.sha256)
        }
    }

    @Test("a handler takes the parts itself, each with its headers and a stream of buffers, and nothing touches the disk")
    func partsStreamed() async throws {
        let directory = try SampleDirectory()
        let uploads = try SampleDirectory()
        let sent = try form(directory)
        let expected = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/big.bin"))
        let (summaries, last) = try await withApplication(directory: uploads.path) { base in
            let summaries = try await client.upload(sent, to: base.appendingPathComponent("parts"), strategy: .streaming).validate().decode([PartSummary].self)
            let last = try await client.upload(sent, to: base.appendingPathComponent("last")).validate().serialized(by: .string)
            return (summaries, last)
        }
        #expect(summaries.map(\.name) == ["title", "big", "small", "last"])
        #expect(summaries.map(\.filename) == [nil, "big.bin", "a b.txt", nil])
        #expect(summaries.map(\.size) == ["Zoë's \"photos\"".utf8.count, 3 << 20, 5, 7])
        #expect(summaries[1].sha256 == sha256Hex(expected))
        #expect(summaries[1].buffers > 1, "a 3 MiB part came as \(summaries[1].buffers) buffer")
        #expect(summaries[3].sha256 == sha256Hex(Array("the end".utf8)))
        #expect(last == "the end")
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path).isEmpty)
    }

    @Test("a body cut before its closing delimiter, or crossing a limit, throws out of the loop")
    func malformedParts() async throws {
        let uploads = try SampleDirectory()
        let cut = Array("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated".utf8)
        let answer = try await withApplication(directory: uploads.path) { base in
            try await client.send(.bytes(cut, contentType: "multipart/form-data; boundary=B"), to: base.appendingPathComponent("parts"))
        }
        #expect(answer.status == 400)
        #expect(String(decoding: answer.body, as: UTF8.self).hasPrefix("acme: "))
        #expect(String(decoding: answer.body, as: UTF8.self).contains("ended before the closing delimiter"))
        let notMultipart = try await withApplication(directory: uploads.path) { base in
            try await client.send(.bytes(Array("{}".utf8), contentType: "application/json"), to: base.appendingPathComponent("parts"))
        }
        #expect(notMultipart.status == 400)
    }
}
