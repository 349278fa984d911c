#if os(macOS) || os(Linux)
import Foundation

/// nginx from Debian terminating TLS in front of the byte sink: one port speaks HTTP/2
/// (ALPN `h2`, HTTP/1.1 otherwise) with nginx's defaults, one HTTP/2 with a 1 MiB stream
/// window (`http2_body_preread_size 1m`; nginx's default window is 64 KiB), another
/// HTTP/1.1 only: on these the request body streams through to the sink unbuffered
/// (`proxy_request_buffering off`, usual for upload endpoints). Two more, HTTP/2 and
/// HTTP/1.1, keep nginx's default: the whole body buffered to disk before it goes on.
/// Its CA and certificate (for `localhost` and `127.0.0.1`) are made with openssl in
/// `directory`; nothing touches the system's trust.
/// On macOS and Linux only: `Process` exists there only.
final class TLSEndpoint {
    let caPath: String
    let http2Port: UInt16
    let http1Port: UInt16
    let http2WideWindowPort: UInt16
    /// HTTP/2 and HTTP/1.1 where nginx buffers the whole body before passing it on.
    let http2BufferedPort: UInt16
    let http1BufferedPort: UInt16
    private let process: Process

    /// Starts nginx in front of the sink on `upstreamPort`, listening on the five ports
    /// after it (HTTP/2, HTTP/1.1, HTTP/2 with a 1 MiB window, HTTP/2 and HTTP/1.1 buffered).
    init(directory: String, upstreamPort: UInt16) throws {
        let folder = directory + "/tls"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        caPath = folder + "/ca.pem"
        let (http2Port, http1Port, http2WideWindowPort) = (upstreamPort + 1, upstreamPort + 2, upstreamPort + 3)
        self.http2Port = http2Port
        self.http1Port = http1Port
        self.http2WideWindowPort = http2WideWindowPort
        let (http2BufferedPort, http1BufferedPort) = (upstreamPort + 4, upstreamPort + 5)
        self.http2BufferedPort = http2BufferedPort
        self.http1BufferedPort = http1BufferedPort
        try Self.makeCertificates(in: folder)
        /// A TLS server block proxying to the sink, listening on `listens`, with `extra`
        /// directives; `streaming` passes the body on as it comes.
        func server(_ listens: [String], streaming: Bool, extra: String = "") -> String {
            """
              server {
            \(listens.map { "    listen 127.0.0.1:\($0);" }.joined(separator: "\n"))
                ssl_certificate \(folder)/server.pem;
                ssl_certificate_key \(folder)/server.key;
                client_max_body_size 0;\(extra)
                location / {
                  proxy_pass http://127.0.0.1:\(upstreamPort);
                  proxy_http_version 1.1;\(streaming ? "\n      proxy_request_buffering off;" : "")
                  proxy_set_header Connection "";
                }
              }

            """
        }
        let configuration = """
        worker_processes 1;
        error_log \(folder)/error.log;
        pid \(folder)/nginx.pid;
        events { worker_connections 64; }
        http {
          access_log off;
          client_body_temp_path \(folder)/body;
          proxy_temp_path \(folder)/proxy;
        \(server(["\(http2Port) ssl http2", "\(http1Port) ssl"], streaming: true))\
        \(server(["\(http2WideWindowPort) ssl http2"], streaming: true, extra: "\n    http2_body_preread_size 1m;"))\
        \(server(["\(http2BufferedPort) ssl http2", "\(http1BufferedPort) ssl"], streaming: false))
        }
        """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["nginx", "-p", folder, "-c", folder + "/nginx.conf", "-g", "daemon off;"]
        try process.run()
        for port in [http2Port, http1Port, http2WideWindowPort, http2BufferedPort, http1BufferedPort] { try Self.waitUntilListening(port: port) }
    }

    /// Stops nginx.
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    private static func makeCertificates(in folder: String) throws {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=formpost-bench CA"], in: folder)
        try openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: folder)
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: folder + "/san.cnf", atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", "server.pem", "-days", "2", "-extfile", "san.cnf"], in: folder)
    }

    private static func openssl(_ arguments: [String], in folder: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkFailure("openssl \(arguments.first ?? "") exited \(process.terminationStatus)") }
    }

    private static func waitUntilListening(port: UInt16) throws {
        for _ in 0..<100 {
            let descriptor = socket(AF_INET, streamSocket, 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            close(descriptor)
            if connected == 0 { return }
            usleep(50_000)
        }
        throw BenchmarkFailure("nginx did not listen on port \(port) (is nginx installed?)")
    }
}
#endif
