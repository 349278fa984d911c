import Foundation

/// A tus 1.0 server (Python's `http.server`) that accepts every append and never answers
/// it: `OPTIONS`, the creation (`POST`) and the offset (`HEAD`, always 0) are answered; a
/// `PATCH` is read whole, then left without an answer, its connection open. Each `PATCH`
/// read is a line of the log: the bytes of its body.
final class SilentTusServer: Sendable {
    let port: Int
    private let log: String
    private let process: ChildProcess

    init(in directory: SampleDirectory) async throws {
        let script = directory.path + "/silent_tus_server.py"
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        port = try freePort()
        log = directory.path + "/patches.log"
        process = try ChildProcess("python3", [script, String(port), log], stdout: .discard, stderr: .inherit)
        try await RawSocket.waitForListener(port: port, attempts: 400)
    }

    func stop() { process.stop() }

    /// The body length of each `PATCH` read, in order.
    func patches() throws -> [Int] {
        guard FileManager.default.fileExists(atPath: log) else { return [] }
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
    }

    private static let script = #"""
    import http.server, sys, threading

    PORT, LOG = int(sys.argv[1]), sys.argv[2]
    length = 0

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status, **fields):
            self.send_response(status)
            for name, value in fields.items():
                self.send_header(name.replace("_", "-"), value)
            self.send_header("Tus-Resumable", "1.0.0")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_OPTIONS(self):
            self.answer(204, Tus_Version="1.0.0", Tus_Extension="creation")

        def do_POST(self):
            global length
            length = int(self.headers["Upload-Length"])
            self.answer(201, Location="/files/1")

        def do_HEAD(self):
            self.answer(200, Upload_Offset="0", Upload_Length=str(length), Cache_Control="no-store")

        def do_PATCH(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with open(LOG, "a") as log:
                log.write(f"{len(body)}\n")
            threading.Event().wait()

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
    """#
}
