#if os(Linux)
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `formpost serve --trusted-proxy` behind nginx, which appends each client's address to
/// `X-Forwarded-For` (`$proxy_add_x_forwarded_for`): the clients are curl bound to
/// 127.0.0.2 and 127.0.0.3 (loopback addresses all), so nginx sees two addresses, while
/// every connection the server takes comes from nginx on 127.0.0.1. Linux only: other
/// systems route 127.0.0.2 only once it is configured.
@Suite("formpost serve behind a trusted proxy", .serialized)
struct TrustedProxyServeTests {
    static let clientA = "127.0.0.2"
    static let clientB = "127.0.0.3"

    /// nginx on 127.0.0.1 (plain HTTP), passing every request on to `upstreamPort` with the
    /// client's address appended to `X-Forwarded-For`.
    final class Front: Sendable {
        let port: Int
        private let process: ChildProcess

        init(directory: String, upstreamPort: Int) throws {
            port = try freePort()
            let configuration = NginxFront.mainConfiguration(directory: directory, http: """
              server {
                listen 127.0.0.1:\(port);
                location / {
                  proxy_pass http://127.0.0.1:\(upstreamPort);
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                }
              }
            """)
            try configuration.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            process = try ChildProcess("nginx", ["-p", directory, "-c", directory + "/nginx.conf", "-g", "daemon off;"], stdout: .discard, stderr: .discard)
            try RawSocket.waitForListenerBlocking(port: port, attempts: 200)
        }

        /// Stops nginx (as it is when the front is released).
        func stop() {
            process.stop()
        }

        deinit {
            process.stop()
        }
    }

    /// A `formpost serve` taking one tus upload in progress per client, with `options`.
    final class Server: Sendable {
        let sample: SampleDirectory
        let port: Int
        let process: ChildProcess

        init(_ options: [String]) throws {
            sample = try SampleDirectory()
            port = try freePort()
            process = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", sample.path + "/uploads", "--no-page",
                                                        "--max-uploads-in-progress-per-client", "1"] + options, stdout: .discard)
            try RawSocket.waitForListenerBlocking(port: port, attempts: 800)
        }

        /// Stops the server (SIGTERM) and returns what it logged.
        func stopAndLog() throws -> String {
            kill(process.pid, SIGTERM)
            return String(decoding: try process.finish(timeout: 60).stderr, as: UTF8.self)
        }

        deinit {
            process.stop()
        }
    }

    /// The status of a tus creation (`POST /files`, 10 bytes declared) sent to `port` from
    /// `source`, with `fields` added.
    static func create(port: Int, from source: String, _ fields: [String] = []) throws -> Int {
        let arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", source, "-X", "POST", "-H", "Tus-Resumable: 1.0.0",
                         "-H", "Upload-Length: 10"] + fields.flatMap { ["-H", $0] } + ["http://127.0.0.1:\(port)/files"]
        let result = try ChildProcess("curl", arguments).finish()
        return Int(String(decoding: result.stdout, as: UTF8.self)) ?? 0
    }

    /// Whether `log` has the request line `request` (`METHOD PATH STATUS`) with the field
    /// `client=` `client`.
    static func logged(_ request: String, client: String, in log: String) -> Bool {
        log.split(separator: "\n").contains { $0.hasSuffix("] " + request) && $0.contains(" client=\(client) ") }
    }

    /// Two clients through nginx, A creating twice (its second with a forged leftmost
    /// `X-Forwarded-For`) and then B: the statuses, and the server's log.
    static func twoClientsThroughNginx(_ options: [String]) async throws -> (statuses: [Int], log: String) {
        let server = try await offPool { try Server(options) }
        let front = try await offPool { try Front(directory: server.sample.path, upstreamPort: server.port) }
        let statuses = try await offPool {
            [try create(port: front.port, from: clientA), try create(port: front.port, from: clientA, ["X-Forwarded-For: 198.51.100.9"]),
             try create(port: front.port, from: clientB)]
        }
        let log = try await offPool { try server.stopAndLog() }
        try await offPool { front.stop() }
        return (statuses, log)
    }

    @Test("with nginx trusted, two clients each get their own limit; a forged leftmost X-Forwarded-For does not give a client another",
          .timeLimit(.minutes(2)))
    func trustedProxyTellsClientsApart() async throws {
        let (statuses, log) = try await Self.twoClientsThroughNginx(["--trusted-proxy", "127.0.0.1"])
        #expect(statuses == [201, 503, 201], "\(log)")
        #expect(Self.logged("POST /files 201", client: "\(Self.clientA)", in: log), "\(log)")
        #expect(Self.logged("POST /files 503", client: "\(Self.clientA)", in: log), "\(log)")
        #expect(Self.logged("POST /files 201", client: "\(Self.clientB)", in: log), "\(log)")
    }

    @Test("without --trusted-proxy, every client behind nginx counts as nginx's address: the second client gets 503",
          .timeLimit(.minutes(2)))
    func untrustedProxyIsOneClient() async throws {
        let (statuses, log) = try await Self.twoClientsThroughNginx([])
        #expect(statuses == [201, 503, 503], "\(log)")
        #expect(Self.logged("POST /files 503", client: "127.0.0.1", in: log), "\(log)")
    }

    @Test("a client that is no trusted proxy has its Forwarded and X-Forwarded-For ignored", .timeLimit(.minutes(2)))
    func untrustedPeerCannotForward() async throws {
        let server = try await offPool { try Server(["--trusted-proxy", "127.0.0.1"]) }
        let statuses = try await offPool {
            [try Self.create(port: server.port, from: Self.clientA, ["X-Forwarded-For: 198.51.100.1"]),
             try Self.create(port: server.port, from: Self.clientA, ["X-Forwarded-For: 198.51.100.2"]),
             try Self.create(port: server.port, from: Self.clientA, ["Forwarded: for=198.51.100.3"])]
        }
        let log = try await offPool { try server.stopAndLog() }
        #expect(statuses == [201, 503, 503], "\(log)")
        #expect(!log.contains("198.51.100"), "\(log)")
    }

    @Test("a --trusted-proxy that is no address or range is refused, naming it")
    func invalidRangeIsRefused() throws {
        let result = try formpost(["serve", "--port", "0", "--trusted-proxy", "10.0.0.0/33"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("10.0.0.0/33 is not an IP address or a CIDR range"), "\(result.stderr)")
    }

    @Test("a --forwarded-header that names no field is refused with exit status 2, naming the ones there are")
    func unknownForwardedHeader() async throws {
        let result = try await offPool { try formpost(["serve", "--port", "0", "--trusted-proxy", "10.0.0.1", "--forwarded-header", "x-real-ip"]) }
        #expect(result.status == 2 && result.stderr.contains("--forwarded-header x-real-ip: expected x-forwarded-for or forwarded"), "\(result.stderr)")
    }
}
#endif
