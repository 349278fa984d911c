import Crypto
import Foundation
import FormPostServer
import Hummingbird
import Logging
import Synchronization

/// A real HTTP server on 127.0.0.1 (ephemeral port) for one test. Paths:
/// - `/upload` — the real ``UploadReceiver``, storing under ``directory``
/// - `/digest` — answers `{"length":…, "sha256":…, "contentType":…, "method":…}` of the raw body
/// - `/redirect/CODE?to=PATH` — answers CODE with `Location: PATH`, without reading the body
/// - `/flaky` — answers 503 (`Retry-After: 0`) to the first two requests, then as `/digest`
/// - `/reject` — answers 413 at once without reading the body, and closes
/// - `/slow` — reads the body with a pause between buffers, then as `/digest`
final class TestServer: Sendable {
    let directory: String
    let flakyCount = Mutex(0)

    init() throws {
        directory = NSTemporaryDirectory() + "formpost-server-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Starts the server, runs `body` with its base URL, and stops the server.
    func run<T: Sendable>(configuration: ReceiverConfiguration? = nil, _ body: @Sendable (URL) async throws -> T) async throws -> T {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let receiver = try UploadReceiver(configuration: configuration ?? ReceiverConfiguration(directory: directory), logger: logger)
        let responder = CallbackResponder<BasicRequestContext> { request, context in
            try await self.respond(request, context: context, receiver: receiver)
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) },
            logger: logger
        )
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await app.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            let result = try await body(URL(string: "http://127.0.0.1:\(port)")!)
            group.cancelAll()
            return result
        }
    }

    private func respond(_ request: Request, context: BasicRequestContext, receiver: UploadReceiver) async throws -> Response {
        let path = request.uri.path
        if path == "/upload" { return await receiver.respond(to: request, context: context) }
        if path.hasPrefix("/redirect/"), let code = Int(path.dropFirst("/redirect/".count)) {
            let target = request.uri.queryParameters.get("to") ?? "/digest"
            return Response(status: .init(code: code), headers: [.location: target])
        }
        if path == "/flaky" {
            let count = flakyCount.withLock { value -> Int in
                value += 1
                return value
            }
            if count <= 2 {
                _ = try await request.body.collect(upTo: .max)
                return Response(status: .serviceUnavailable, headers: [.retryAfter: "0"])
            }
        }
        if path == "/reject" {
            var response = Response(status: .contentTooLarge, headers: [.connection: "close"], body: .init(byteBuffer: .init(string: "too large")))
            response.headers[.contentType] = "text/plain"
            return response
        }
        var hasher = SHA256()
        var length = 0
        for try await buffer in request.body {
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            length += buffer.readableBytes
            if path == "/slow" { try await Task.sleep(nanoseconds: 2_000_000) }
        }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        let json = #"{"length":\#(length),"sha256":"\#(digest)","contentType":"\#(request.headers[.contentType] ?? "")","method":"\#(request.method)"}"#
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: json)))
    }
}

/// What `/digest` answers.
struct Digest: Decodable, Equatable {
    let length: Int
    let sha256: String
    let contentType: String
    let method: String
}

/// SHA-256 of bytes, in hexadecimal.
func sha256Hex(_ bytes: some DataProtocol) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}
