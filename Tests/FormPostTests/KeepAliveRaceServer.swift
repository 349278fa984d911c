import Foundation

/// An HTTP/1.1 server (Python's `http.server`, a thread a connection) that closes
/// connections on a request it reads whole and never answers, as a server whose keep-alive
/// clock ran out just as the request arrived. It never says `Connection: close`, so the
/// client keeps the connections it answered on.
///
/// A `POST` is answered 200 with the length of its body. Each request is a line of the
/// log: its connection's number, its number on the connection, whether it was answered,
/// and its body's length.
final class KeepAliveRaceServer: Sendable {
    /// Which requests are dropped.
    enum Mode: String {
        /// Each connection's second request: every reused connection loses the race.
        case secondOnEachConnection = "second"
        /// The first request the server receives, whatever its connection.
        case firstOfAll = "first"
        /// The second request the server receives, whatever its connection.
        case secondOfAll = "second-of-all"
    }

    /// One request as the server saw it.
    struct Request: CustomStringConvertible {
        let connection: Int
        let number: Int
        let answered: Bool
        let bytes: Int
        var description: String { "connection \(connection) request \(number) \(answered ? "answered" : "dropped") \(bytes) bytes" }
    }

    let port: Int
    private let log: String
    private let process: ChildProcess

    init(_ mode: Mode, in directory: SampleDirectory) async throws {
        let script = directory.path + "/keep_alive_race_server.py"
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        port = try freePort()
        log = directory.path + "/requests.log"
        process = try ChildProcess("python3", [script, String(port), mode.rawValue, log], stdout: .discard, stderr: .inherit)
        try await RawSocket.waitForListener(port: port, attempts: 400)
    }

    func stop() { process.stop() }

    /// The requests received, in order.
    func requests() throws -> [Request] {
        guard FileManager.default.fileExists(atPath: log) else { return [] }
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { line in
            let fields = line.split(separator: " ").compactMap { Int($0) }
            return Request(connection: fields[0], number: fields[1], answered: fields[2] == 1, bytes: fields[3])
        }
    }

    private static let script = #"""
    import http.server, itertools, sys, threading

    PORT, MODE, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    connections, requests = itertools.count(1), itertools.count(1)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            self.connection_number, self.requests = next(connections), 0

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.requests += 1
            with lock:
                overall = next(requests)
                if MODE == "second":
                    answered = self.requests != 2
                else:
                    answered = overall != (2 if MODE == "second-of-all" else 1)
                with open(LOG, "a") as log:
                    log.write(f"{self.connection_number} {self.requests} {int(answered)} {len(body)}\n")
            if not answered:
                self.close_connection = True
                return
            reply = str(len(body)).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
    """#
}
