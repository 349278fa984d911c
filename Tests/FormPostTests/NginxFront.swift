#if os(Linux)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// nginx from Debian in front of a test server on 127.0.0.1: TLS terminated with the
/// fixtures' certificates, request bodies streamed on to the upstream unbuffered. Each
/// port serves one certificate: ``port`` the valid one (HTTP/2 by ALPN, else HTTP/1.1),
/// ``expiredPort``, ``wrongHostPort`` and ``untrustedPort`` the others. The access log
/// records each request's protocol (``protocolsLogged(atLeast:)``). With `keepaliveRequests`, nginx
/// ends a connection after that many requests (HTTP/2: GOAWAY, as its default does after
/// 1,000). Linux only, as ``HTTPSTests``.
final class NginxFront: Sendable {
    let port: Int
    let expiredPort: Int
    let wrongHostPort: Int
    let untrustedPort: Int
    /// The valid certificate, on HTTP/1.1, asking clients for a certificate the CA signed.
    let clientCertificatePort: Int
    /// The valid certificate, HTTP/1.1 only (ALPN offers no `h2`).
    let http1Port: Int
    private let directory: String
    private let process: ChildProcess

    init(fixtures: TLSFixtures, upstreamPort: Int, keepaliveRequests: Int? = nil) throws {
        directory = fixtures.directory + "/nginx"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try freePort()
        expiredPort = try freePort()
        wrongHostPort = try freePort()
        untrustedPort = try freePort()
        clientCertificatePort = try freePort()
        http1Port = try freePort()
        func server(_ port: Int, _ certificate: String, http2: Bool, verifyingClients: Bool = false) -> String {
            """
              server {
                listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");
                ssl_certificate \(certificate);
                ssl_certificate_key \(fixtures.keyPath);\(verifyingClients ? "\n    ssl_client_certificate \(fixtures.caPath);\n    ssl_verify_client on;" : "")
                client_max_body_size 0;
                location / {
                  proxy_pass http://127.0.0.1:\(upstreamPort);
                  proxy_http_version 1.1;
                  proxy_request_buffering off;
                  proxy_set_header Connection "";
                }
              }

            """
        }
        let configuration = """
        worker_processes 1;
        error_log \(directory)/error.log;
        pid \(directory)/nginx.pid;
        events { worker_connections 256; }
        http {
          log_format protocols '$server_protocol';
          access_log \(directory)/access.log protocols;
          client_body_temp_path \(directory)/body;
          proxy_temp_path \(directory)/proxy;\(keepaliveRequests.map { "\n  keepalive_requests \($0);" } ?? "")
        \(server(port, fixtures.certificatePath, http2: true))\(server(expiredPort, fixtures.expiredCertificatePath, http2: false))\
        \(server(wrongHostPort, fixtures.wrongHostCertificatePath, http2: false))\(server(untrustedPort, fixtures.untrustedCertificatePath, http2: false))\
        \(server(clientCertificatePort, fixtures.certificatePath, http2: false, verifyingClients: true))\(server(http1Port, fixtures.certificatePath, http2: false))
        }
        """
        try configuration.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try ChildProcess("nginx", ["-p", directory, "-c", directory + "/nginx.conf", "-g", "daemon off;"], stdout: .discard, stderr: .discard)
        for port in [port, expiredPort, wrongHostPort, untrustedPort, clientCertificatePort, http1Port] { try waitUntilListening(port) }
    }

    /// A whole nginx configuration for a test: one worker, its log, pid and temporary files
    /// in `directory`, no access log, and `http` (server blocks, includes) in its `http` block.
    static func mainConfiguration(directory: String, http: String) -> String {
        """
        worker_processes 1;
        error_log \(directory)/error.log;
        pid \(directory)/nginx.pid;
        events { worker_connections 64; }
        http {
          access_log off;
          client_body_temp_path \(directory)/body;
          proxy_temp_path \(directory)/proxy;
        \(http)
        }
        """
    }

    /// Stops nginx (as it is when the front is released).
    func stop() {
        process.stop()
    }

    /// The protocol of every request so far, in order (`HTTP/2.0`, `HTTP/1.1`), once at
    /// least `count` are logged or 5 s have passed. nginx writes a request's line after it
    /// has answered it, so a client may have exited before its request is in the log.
    func protocolsLogged(atLeast count: Int) async throws -> [String] {
        var lines: [String] = []
        for _ in 0..<200 {
            lines = ((try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= count { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        return lines
    }

    private func waitUntilListening(_ port: Int) throws {
        for _ in 0..<200 {
            if (try? RawSocket.connects(port: port)) == true { return }
            usleep(25_000)
        }
        let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
        throw Subprocess.Failure(description: "nginx did not listen on \(port): \(log)")
    }
}
#endif
