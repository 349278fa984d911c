import Foundation

/// An HTTP/1.1 server (Python's `http.server`, a thread a connection; over TLS when given a
/// certificate) that numbers the connections it accepts and never closes one itself: a
/// client that opens more connections than it runs requests at once is not reusing them.
///
/// A `POST` (with a `Content-Length` or chunked body) is answered 200 with the JSON
/// ``Answer``: which connection carried it and how long its body was; a request to a path
/// with `?delay=S` is answered S seconds after its body arrived.
final class ConnectionCountingServer: Sendable {
    /// What each request is answered.
    struct Answer: Decodable, Equatable {
        /// The number of the connection the request came on, from 1.
        let connection: Int
        /// The request body's length.
        let length: Int
    }

    let port: Int
    private let log: String
    private let process: ChildProcess

    /// Starts the server on a free port of 127.0.0.1; with `certificate` and `key` (PEM
    /// paths) it speaks TLS (HTTP/1.1 only, no ALPN).
    init(in directory: SampleDirectory, certificate: String? = nil, key: String? = nil) async throws {
        let script = directory.path + "/connection_counting_server.py"
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        port = try freePort()
        log = directory.path + "/connections.log"
        let tls = [certificate, key].compactMap { $0 }
        process = try ChildProcess("python3", [script, String(port), log] + tls, stdout: .discard, stderr: .inherit)
        try await RawSocket.waitForListener(port: port, attempts: 400)
    }

    func stop() { process.stop() }

    /// How many connections the server has accepted, the listener probes of
    /// ``RawSocket/waitForListener(port:attempts:)`` excluded (they send no request).
    func acceptedConnections() throws -> Int {
        guard FileManager.default.fileExists(atPath: log) else { return 0 }
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
    }

    private static let script = #"""
    import http.server, itertools, ssl, sys, threading, time, urllib.parse

    PORT, LOG = int(sys.argv[1]), sys.argv[2]
    connections = itertools.count(1)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The head and the body go out in two writes: without this, the body waits for the
        # client's delayed acknowledgement of the head on every reused connection.
        disable_nagle_algorithm = True
        number = None

        def log_message(self, *arguments):
            pass

        def numbered(self):
            # Numbered at its first request: a probe that connects and closes is no connection.
            if self.number is None:
                with lock:
                    self.number = next(connections)
                    with open(LOG, "a") as log:
                        log.write(f"{self.number}\n")
            return self.number

        def read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                length = 0
                while True:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                    self.rfile.read(size + 2)
                    length += size
                    if size == 0:
                        return length
            return len(self.rfile.read(int(self.headers.get("Content-Length", 0))))

        def do_POST(self):
            number = self.numbered()
            length = self.read_body()
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            time.sleep(float(query.get("delay", ["0"])[0]))
            body = f'{{"connection":{number},"length":{length}}}'.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 64

    server = Server(("127.0.0.1", PORT), Handler)
    if len(sys.argv) > 4:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[3], sys.argv[4])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()
    """#
}
