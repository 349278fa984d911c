import Crypto
import Foundation
import FormPostServer
import Hummingbird
import ServiceLifecycle
import Logging
import NIOSSL
import Synchronization

/// A real HTTP server on 127.0.0.1 (ephemeral port) for one test. Paths:
/// - `/upload` — the real ``UploadReceiver``, storing under ``directory``
/// - `/digest` — answers `{"length":…, "sha256":…, "contentType":…, "method":…}` of the raw body
/// - `/redirect/CODE?to=PATH` — answers CODE with `Location: PATH`, without reading the body
///   (with `&read=1`, after reading all of it)
/// - `/flaky` — answers 503 (`Retry-After: 0`) to the first two requests, then as `/digest`
/// - `/reject` — answers 413 at once without reading the body, and closes
/// - `/slow` — reads the body with a pause between buffers, then as `/digest`
/// - `/echo` — answers the request as JSON: ``Echo``
/// - `/reply?status=…&type=…&body64=…` — answers that status, content type and (base64) body
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
        let responder = CallbackResponder<ReceiverRequestContext> { request, context in
            try await self.respond(request, context: context, receiver: receiver)
        }
        return try await whileRunning({ onStarted in
            Application(
                responder: responder,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onStarted($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }, { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) })
    }

    private func respond(_ request: Request, context: ReceiverRequestContext, receiver: UploadReceiver) async throws -> Response {
        let path = request.uri.path
        if path == "/upload" { return await receiver.respond(to: request, context: context) }
        if path.hasPrefix("/redirect/"), let code = Int(path.dropFirst("/redirect/".count)) {
            let target = request.uri.queryParameters.get("to") ?? "/digest"
            if request.uri.queryParameters.get("read") == "1" { _ = try await request.body.collect(upTo: 64 << 20) }
            return Response(status: .init(code: code), headers: [.location: target])
        }
        if path == "/echo" {
            let body = try await request.body.collect(upTo: 64 << 20)
            let echo = Echo(
                method: request.method.rawValue, query: request.uri.query ?? "",
                headers: request.headers.map { [$0.name.canonicalName, $0.value] },
                body: Data(body.readableBytesView).base64EncodedString()
            )
            let json = try JSONEncoder().encode(echo)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(bytes: json)))
        }
        if path == "/reply" {
            let parameters = request.uri.queryParameters
            let status = parameters.get("status").flatMap { Int($0) } ?? 200
            let body = Data(base64Encoded: String(parameters.get("body64") ?? "")) ?? Data()
            var headers: HTTPFields = [:]
            if let type = parameters.get("type") { headers[.contentType] = String(type) }
            return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: .init(bytes: body)))
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
        let digest = hexString(hasher.finalize())
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

/// What `/echo` answers: the request as the server saw it.
struct Echo: Codable, Equatable {
    let method: String
    /// The raw (percent-encoded) query, empty when none.
    let query: String
    /// The header fields as [name (lowercased), value] pairs, in order.
    let headers: [[String]]
    /// The body in base64.
    let body: String

    /// The first value of the header field `name`.
    func header(_ name: String) -> String? { headers.first { $0[0] == name.lowercased() }?[1] }
    /// Every field named `name`.
    func headers(named name: String) -> [String] { headers.filter { $0[0] == name.lowercased() }.map { $0[1] } }
    /// The body's bytes.
    var bodyBytes: [UInt8] { Array(Data(base64Encoded: body) ?? Data()) }
}

/// SHA-256 of bytes, in hexadecimal.
func sha256Hex(_ bytes: some DataProtocol) -> String {
    hexString(SHA256.hash(data: bytes))
}

/// Bytes (a digest's) in lowercase hexadecimal.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// Runs the application `make` builds (handing it the callback that reports its port) until
/// `body`, given that port, returns or throws; then stops it gracefully, as `formpost serve`
/// stops: the listening socket closes, the connections accepted are served to their end (at
/// most 10 s, then cancelled). Cancelling the serving task instead drops connections NIO has
/// accepted but not yet handed to the server, and NIO traps on each ("Deinited
/// NIOAsyncWriter without calling finish()", apple/swift-nio#2813): it crashed the tests.
func whileRunning<App: ApplicationProtocol, T: Sendable>(
    _ make: (@escaping @Sendable (Int) async -> Void) throws -> App, _ body: @Sendable (Int) async throws -> T
) async throws -> T {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = try make { continuation.yield($0) }
    var logger = Logger(label: "test.services")
    logger.logLevel = .critical
    var configuration = ServiceGroupConfiguration(services: [app], logger: logger)
    configuration.maximumGracefulShutdownDuration = .seconds(10)
    let services = ServiceGroup(configuration: configuration)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            do {
                try await services.run()
            } catch {
                continuation.finish()  // a server that never ran reports no port
                throw error
            }
            return nil
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            while try await group.next() != nil {}  // the server's own error, when it did not start
            throw CancellationError()
        }
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body(port))
        } catch {
            outcome = .failure(error)
        }
        // Connections clients open late (AsyncHTTPClient opens a spare one after its first)
        // are accepted before the server stops: NIO can still trap on a connection accepted
        // while the listening socket closes.
        try? await Task.sleep(for: .milliseconds(300))
        await services.triggerGracefulShutdown()
        // A stop that outlasted its 10 s (a connection the test left hanging) was cancelled:
        // that is the end of the server, not an outcome of the test.
        while let _ = try? await group.next() {}
        return try outcome.get()
    }
}

/// Runs `formpost serve`'s server (an ``UploadServer``, over TLS with `tlsConfiguration`) —
/// or, `on` ``ReceiverAdapter/vapor``, a Vapor app mounting the same receivers with
/// FormPostVapor (plain HTTP, no connection limits) — storing into `directory` on a free
/// port, and `body` with that port.
/// With `resumableExpiry`, it receives resumable uploads too, kept that long: tus at
/// `/files`, the IETF draft's with upload resources at `/uploads`. The receivers log to
/// `logger` (by default nowhere but at critical level).
func withUploadServer<T: Sendable>(on adapter: ReceiverAdapter = .hummingbird, directory: String, configuration: ReceiverConfiguration? = nil,
                                   tlsConfiguration: TLSConfiguration? = nil, limits: ConnectionLimits = ConnectionLimits(),
                                   resumableExpiry: Duration? = nil, logger: Logger? = nil,
                                   _ body: @Sendable (Int) async throws -> T) async throws -> T {
    let logger = logger ?? {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()
    let configuration = configuration ?? ReceiverConfiguration(directory: directory)
    let receiver = try UploadReceiver(configuration: configuration, logger: logger)
    let tus = try resumableExpiry.map { try TusReceiver(configuration: configuration, expiry: $0, logger: logger) }
    let resumable = try resumableExpiry.map { try ResumableUploadReceiver(receiver: receiver, expiry: $0, logger: logger) }
    switch adapter {
    case .hummingbird:
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tlsConfiguration: tlsConfiguration, connectionLimits: limits,
                                  tus: tus, resumable: resumable)
        return try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }, body)
    case .vapor:
        precondition(tlsConfiguration == nil, "the Vapor app of the tests serves plain HTTP")
        #if Vapor
        return try await whileVaporReceives(receiver, tus: tus, resumable: resumable, body)
        #else
        throw ReceiverAdapter.AdapterError.builtWithoutVapor
        #endif
    }
}

/// Runs `server` — on Hummingbird as `formpost serve` runs it, or, `on` ``ReceiverAdapter/vapor``,
/// its routes (receivers and gates) mounted in a Vapor app with FormPostVapor, forms on
/// `/upload` — on a free port of 127.0.0.1, and `body` with that port.
func whileServing<T: Sendable>(_ server: UploadServer, on adapter: ReceiverAdapter, _ body: @Sendable (Int) async throws -> T) async throws -> T {
    switch adapter {
    case .hummingbird:
        return try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }, body)
    case .vapor:
        #if Vapor
        return try await whileVaporServes(server.routes, body)
        #else
        throw ReceiverAdapter.AdapterError.builtWithoutVapor
        #endif
    }
}

/// Blocks until a file of an upload in progress in `stateDirectory` (a receiver's `.tus` or
/// `.resumable`: its data, or the content of a form's file part) holds more than `bytes`,
/// or 60 s have passed.
func waitUntilStored(in stateDirectory: String, moreThan bytes: Int64) {
    for _ in 0..<1200 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []
        let sizes = names.filter { $0.hasSuffix(".data") || $0.contains(".part-") }.compactMap {
            ((try? FileManager.default.attributesOfItem(atPath: stateDirectory + "/" + $0))?[.size] as? NSNumber)?.int64Value
        }
        if sizes.contains(where: { $0 > bytes }) { return }
        usleep(50_000)
    }
}
