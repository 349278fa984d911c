import Foundation

/// The HTTP servers the receivers run on, each as a process storing into a directory of
/// its own on a free port of 127.0.0.1, with the same routes: forms (and the IETF draft's
/// creations) on `POST /upload`, tus under `/files`, the draft's uploads under `/uploads`,
/// and the upload page at ``pagePath``.
enum ReceiverAdapter: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Hummingbird: `formpost serve`.
    case hummingbird
    /// Vapor: `upload-receiver-vapor`, the package's Vapor app on FormPostVapor (built with
    /// the "Vapor" trait, as scripts/test builds; without it the program says so and exits).
    case vapor

    var description: String { rawValue }

    /// Where the server answers the upload page, which sends to the same path:
    /// `formpost serve` takes forms on any path and serves the page at its root.
    var pagePath: String {
        switch self {
        case .hummingbird: "/"
        case .vapor: "/upload"
        }
    }

    /// A running server of this adapter.
    final class Server: Sendable {
        let port: Int
        let directory: String
        private let process: ChildProcess

        init(port: Int, directory: String, process: ChildProcess) {
            self.port = port
            self.directory = directory
            self.process = process
        }

        var base: String { "http://127.0.0.1:\(port)" }

        /// The stored file named `storedAs`.
        func stored(_ storedAs: String) throws -> Data {
            try Data(contentsOf: URL(fileURLWithPath: directory + "/" + storedAs))
        }

        func stop() { process.stop() }
    }

    /// The command that runs this adapter's server on `port`, storing into `directory` files
    /// of at most `maxFileSize` bytes (the receivers' default when nil): the program, then
    /// its arguments. Throws when the Vapor app was built without the trait.
    func command(port: String, directory: String, maxFileSize: Int64? = nil) async throws -> [String] {
        switch self {
        case .hummingbird:
            return [formpostBinary, "serve", "--port", port, "--dir", directory] + (maxFileSize.map { ["--max-file-size", String($0)] } ?? [])
        case .vapor:
            let program = URL(fileURLWithPath: formpostBinary).deletingLastPathComponent().appendingPathComponent("upload-receiver-vapor").path
            // Without arguments it answers its usage (2), or that it was built without the trait (1).
            guard try await offPool({ try Subprocess.status(program, []) }) == 2 else { throw AdapterError.builtWithoutVapor }
            return [program, port, directory] + (maxFileSize.map { [String($0)] } ?? [])
        }
    }

    /// Starts a server storing into `directory` files of at most `maxFileSize` bytes (the
    /// receivers' default when nil); returns once it accepts connections.
    func start(directory: String, maxFileSize: Int64? = nil) async throws -> Server {
        let port = try freePort()
        let command = try await command(port: String(port), directory: directory, maxFileSize: maxFileSize)
        let process = try ChildProcess(command[0], Array(command.dropFirst()), stdout: .discard, stderr: .discard)
        if try await process.waitUntilListening(port: port) { return Server(port: port, directory: directory, process: process) }
        process.stop()
        throw AdapterError.notListening(self)
    }

    enum AdapterError: Error, CustomStringConvertible {
        case builtWithoutVapor
        case notListening(ReceiverAdapter)

        var description: String {
            switch self {
            case .builtWithoutVapor: "upload-receiver-vapor was built without the Vapor trait: build with `swift build --build-tests --traits Vapor` (scripts/test does)"
            case .notListening(let adapter): "the \(adapter) server ended, or accepted no connection within 10 s"
            }
        }
    }
}
