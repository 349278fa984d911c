import Foundation
import FormPostServer
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``UploadServer/trustedProxies`` in Swift: connections from a trusted proxy are exempt
/// from the per-address connection limit, and the IETF draft's receiver counts its uploads
/// under the client the proxy forwarded — on Hummingbird, and with the same routes mounted
/// in a Vapor app.
@Suite("UploadServer behind a trusted proxy")
struct TrustedProxyServerTests {
    /// Runs `body` with the port of a server on 127.0.0.1 with `limits` and
    /// `trustedProxies`, receiving the IETF draft's resumable uploads, one in progress per client.
    static func withServer<T: Sendable>(limits: ConnectionLimits = ConnectionLimits(), trusting ranges: [String], on adapter: ReceiverAdapter = .hummingbird,
                                        _ body: @Sendable (Int) async throws -> T) async throws -> T {
        let uploads = try SampleDirectory()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: uploads.path, maxUploadsInProgressPerClient: 1)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let resumable = try ResumableUploadReceiver(receiver: receiver, expiry: .seconds(3600), logger: logger)
        var server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, connectionLimits: limits, resumable: resumable)
        server.trustedProxies = try TrustedProxies(ranges)
        return try await whileServing(server, on: adapter, body)
    }

    /// The status line of `GET /` on a new connection while another is held open, both from
    /// 127.0.0.1, to a server taking one connection per address.
    static func secondConnection(trusting ranges: [String]) async throws -> String {
        try await withServer(limits: ConnectionLimits(maxConnectionsPerAddress: 1), trusting: ranges) { port in
            try await offPool {
                let request = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
                guard let held = try RawSocket.connect(port: port) else { throw Subprocess.Failure(description: "connect failed") }
                defer { close(held) }
                // Answered, so counted before the second connection is made.
                _ = request.withUnsafeBytes { send(held, $0.baseAddress, $0.count, 0) }
                // 30 s: a server started beside a loaded parallel test run has answered after 10.
                guard RawSocket.readStatusLine(held, seconds: 30).hasPrefix("HTTP/1.1 200") else {
                    throw Subprocess.Failure(description: "the first connection was not served")
                }
                return try RawSocket.sendAndReadStatusLine(port: port, bytes: request, seconds: 30)
            }
        }
    }

    @Test("a trusted proxy's connections are not counted per address; an untrusted address's are")
    func trustedProxyConnectionsAreExempt() async throws {
        #expect(try await Self.secondConnection(trusting: ["127.0.0.1"]).hasPrefix("HTTP/1.1 200"))
        #expect(try await Self.secondConnection(trusting: []) == "")
    }

    @Test("the IETF draft's uploads count per forwarded client: each of two gets its one, a second of one gets 503",
          arguments: ReceiverAdapter.allCases)
    func draftUploadsCountPerForwardedClient(adapter: ReceiverAdapter) async throws {
        let statuses = try await Self.withServer(trusting: ["127.0.0.0/8"], on: adapter) { port in
            try await offPool {
                try ["198.51.100.1", "2001:db8::1", "198.51.100.1"].map { client in
                    let request = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: \(client)\r\nUpload-Complete: ?0\r\nContent-Length: 0\r\n\r\n"
                    // A creation syncs its state to the disk, which other tests keep busy: more than 10 s seen.
                    return try RawSocket.sendAndReadStatusLine(port: port, bytes: Array(request.utf8), seconds: 60)
                }
            }
        }
        #expect(statuses.map { $0.split(separator: " ").dropFirst().first ?? "" } == ["201", "201", "503"], "\(statuses)")
    }
}
