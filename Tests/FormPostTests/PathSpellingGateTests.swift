import Foundation
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import HTTPTypes
import Logging
import Testing

/// The one classifier of requests (``ReceiverRouter``) that the router and every gate use:
/// a path spelled differently never begins an upload past a gate. Each spelling is sent
/// raw (nothing decoded or normalised on the way) to an ``UploadServer`` — on Hummingbird,
/// and its routes mounted in a Vapor app with FormPostVapor — with tus at
/// `/files` and the IETF draft at `/uploads`, behind one gate at a time; every request
/// carries the fields of a tus creation and of a draft creation, so that any receiver
/// that took it for a creation would create an upload.
@Suite("Path spellings against every gate")
struct PathSpellingGateTests {
    /// A gate in front of the receivers.
    enum Gate: String, CaseIterable, CustomStringConvertible, Sendable {
        /// Signed URLs: an unsigned creation is 401.
        case signature
        /// The authorization hook, refusing every upload: 403.
        case hook
        /// The authorization hook allowing 2 bytes: a creation declaring 5 is 413.
        case byteLimit
        /// One upload in progress per protocol, already taken: a creation is 503.
        case admission

        var description: String { rawValue }
    }

    /// What a request is answered, by what it is.
    enum Expected: Sendable, CustomStringConvertible {
        /// It begins an upload: the gate refuses it (`tusPut`: a `PUT` on the tus path, which
        /// the tus receiver answers 405 once past the gates that let it through).
        case creation(tusPut: Bool)
        /// Under a resumable base path, naming no upload.
        case notFound
        /// A method the target does not take; it begins nothing.
        case methodNotAllowed
        /// `OPTIONS` of a receiver: what it takes, and nothing begun.
        case options

        func status(behind gate: Gate) -> Int {
            switch self {
            case .notFound: 404
            case .methodNotAllowed: 405
            case .options: 204
            case .creation(let tusPut):
                switch gate {
                case .signature: 401
                case .hook: 403
                case .byteLimit: 413
                case .admission: tusPut ? 405 : 503
                }
            }
        }

        var description: String {
            switch self {
            case .creation: "creation"
            case .notFound: "404"
            case .methodNotAllowed: "405"
            case .options: "OPTIONS"
            }
        }
    }

    /// The spellings, each for POST, PUT, PATCH and OPTIONS, and what each is.
    static let rows: [(method: String, path: String, expected: Expected)] = {
        var rows: [(String, String, Expected)] = []
        for method in ["POST", "PUT", "PATCH", "OPTIONS"] {
            let begins = method == "POST" || method == "PUT"
            // The tus base path with one trailing slash creates: gated.
            rows.append((method, "/files/", begins ? .creation(tusPut: method == "PUT") : method == "OPTIONS" ? .options : .methodNotAllowed))
            // Paths under a base path that name no upload: 404 whatever the method.
            for path in ["/files//", "/files/.", "/files/%2e", "/files/%2E%2E", "/uploads/", "/uploads//", "/uploads/."] {
                rows.append((method, path, .notFound))
            }
            // Any other spelling is no tus path: a draft creation (it asks with Upload-Complete), gated.
            for path in ["//files", "/FILES", "/files%2f", "/upload/", "//upload", "/./files"] {
                // (OPTIONS with Upload-Complete asks the draft for a creation, which it takes by POST or PUT alone.)
                rows.append((method, path, begins ? .creation(tusPut: false) : .methodNotAllowed))
            }
        }
        return rows
    }()

    /// tus's `X-HTTP-Method-Override` on a `POST`: taken for the method it names by the tus
    /// receiver, and still gated as the `POST` it is on the base path.
    static let overrides: [(path: String, override: String, expected: Expected)] = [
        ("/files", "PATCH", .creation(tusPut: true)),
        ("/files/", "PUT", .creation(tusPut: true)),
        ("/files//", "POST", .notFound),
        ("/files/.", "PATCH", .notFound),
    ]

    /// A request of `method` on `path` (sent as is) that both a tus and a draft receiver
    /// would take for a creation of a 5-byte upload, with its 5 bytes.
    static func request(_ method: String, _ path: String) -> [UInt8] {
        Array(("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 5\r\n"
            + "Upload-Complete: ?1\r\nUpload-Draft-Interop-Version: 6\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
            + "Content-Length: 5\r\n\r\nhello").utf8)
    }

    /// The uploads begun and files stored under `directory`: the tus and draft states, and
    /// the files stored.
    static func stored(in directory: String) -> [String] {
        let manager = FileManager.default
        let states = [".tus", ".resumable"].flatMap { state in
            ((try? manager.contentsOfDirectory(atPath: directory + "/" + state)) ?? []).filter { $0.hasSuffix(".json") }.map { state + "/" + $0 }
        }
        return states + ((try? manager.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// Runs an ``UploadServer`` behind `gate`, storing into `directory`, and `body` with its port.
    static func withGatedServer<T: Sendable>(_ gate: Gate, on adapter: ReceiverAdapter, directory: String,
                                             _ body: @Sendable (Int) async throws -> T) async throws -> T {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: directory, maxUploadsInProgress: gate == .admission ? 1 : 1000)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let tus = try TusReceiver(configuration: configuration, logger: logger)
        let resumable = try ResumableUploadReceiver(receiver: receiver, logger: logger)
        let signer = gate == .signature ? try UploadURLSigner(key: Array(repeating: 7, count: 32)) : nil
        var server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: tus, resumable: resumable, uploadSigner: signer)
        switch gate {
        case .hook: server.authorize = { _ in .deny(status: .forbidden, message: "refused by the hook") }
        case .byteLimit: server.authorize = { _ in .allowWith(UploadGrant(maxBytes: 2)) }
        case .signature, .admission: break
        }
        return try await whileServing(server, on: adapter, body)
    }

    /// What the Vapor app answers `method` on `path`, which `formpost serve` answers as
    /// `expected`. Vapor reads a path's leading slashes as one (`URI(path:)`: `//files` is
    /// `/files` to Vapor, to its router and to the routes alike), then finds a route by the
    /// path's non-empty segments: forms on `/upload` (`POST`, `PUT`, `OPTIONS`), tus under
    /// `/files`, the draft under `/uploads`. Anything else it answers 404 itself, and nothing
    /// reaches a receiver. A path it reads differently is answered as `formpost serve`
    /// answers the path it reads.
    static func vaporStatus(_ method: String, _ path: String, expected: Expected, behind gate: Gate) -> Int {
        var read = Substring(path)
        while read.hasPrefix("//") { read = read.dropFirst() }
        let segments = read.split(separator: "/")
        let forms = segments == ["upload"]
        guard forms || segments.first == "files" || segments.first == "uploads" else { return 404 }
        if forms, !["POST", "PUT", "OPTIONS"].contains(method) { return 404 }
        guard read != path else { return expected.status(behind: gate) }
        let row = rows.first { $0.method == method && ($0.path == read || $0.path == read + "/") }
        return (row?.expected ?? expected).status(behind: gate)
    }

    @Test("every spelling of a path, for POST, PUT, PATCH and OPTIONS, and POST with X-HTTP-Method-Override: a creation only on the tus path itself (with or without one trailing /) or as what it is, and each one gated; nothing else creates, nothing is stored",
          .timeLimit(.minutes(3)), arguments: Gate.allCases, ReceiverAdapter.allCases)
    func spellings(gate: Gate, adapter: ReceiverAdapter) async throws {
        let sample = try SampleDirectory()
        let directory = sample.path + "/uploads"
        let (answers, before, after) = try await Self.withGatedServer(gate, on: adapter, directory: directory) { port in
            try await offPool {
                if gate == .admission {
                    // The one place per protocol taken, by a tus upload and a draft upload.
                    let tus = try RawSocket.sendAndReadStatusLine(
                        port: port, bytes: Array("POST /files HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 5\r\n\r\n".utf8), seconds: 60)
                    let draft = try RawSocket.sendAndReadStatusLine(
                        port: port, bytes: Array("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nUpload-Complete: ?0\r\nContent-Length: 0\r\n\r\n".utf8), seconds: 60)
                    guard tus.contains(" 201 "), draft.contains(" 201 ") else { throw Subprocess.Failure(description: "the uploads that fill the places: \(tus), \(draft)") }
                }
                let before = Self.stored(in: directory)
                var answers = try Self.rows.map { row in try RawSocket.sendAndReadStatusLine(port: port, bytes: Self.request(row.method, row.path), seconds: 60) }
                for row in Self.overrides {
                    var bytes = Self.request("POST", row.path)
                    bytes.insert(contentsOf: Array("X-HTTP-Method-Override: \(row.override)\r\n".utf8), at: bytes.count - "\r\nhello".utf8.count)
                    answers.append(try RawSocket.sendAndReadStatusLine(port: port, bytes: bytes, seconds: 60))
                }
                return (answers, before, Self.stored(in: directory))
            }
        }
        let sent = Self.rows + Self.overrides.map { (method: "POST (\($0.override))", path: $0.path, expected: $0.expected) }
        for (row, answer) in zip(sent, answers) {
            let status = answer.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            let method = String(row.method.prefix { $0 != " " })
            let expected = adapter == .vapor ? Self.vaporStatus(method, row.path, expected: row.expected, behind: gate) : row.expected.status(behind: gate)
            #expect(status == expected, "\(gate) on \(adapter): \(row.method) \(row.path) (\(row.expected)) answered \(answer)")
        }
        #expect(after == before, "\(gate) on \(adapter): something was begun or stored: \(Set(after).subtracting(before).sorted())")
        #expect(before.count == (gate == .admission ? 2 : 0))
    }

    @Test("the router's reading of a path is the receivers' and the gates': one route per request")
    func routes() {
        let router = ReceiverRouter(tusBasePath: "/files", resumableBasePath: "/uploads", pagePath: "/", servesHealth: true, servesMetrics: true)
        let id = String(repeating: "0123456789abcdef", count: 2)
        let draft: HTTPFields = [HTTPField.Name("Upload-Complete")!: "?1"]
        let cases: [(HTTPRequest.Method, String, HTTPFields, ReceiverRoute)] = [
            (.post, "/files", [:], .creation(.tus)),
            (.post, "/files/", [:], .creation(.tus)),
            (.put, "/files/", [:], .creation(.tus)),
            (.options, "/files", [:], .resumable(.tus)),
            (.patch, "/files/" + id, [:], .upload(.tus, id: id)),
            (.head, "/files/" + id, [:], .upload(.tus, id: id)),
            (.patch, "/files/" + id.uppercased(), [:], .notFound(.tus)),
            (.patch, "/files//" + id, [:], .notFound(.tus)),
            (.patch, "/files/" + id + "/", [:], .notFound(.tus)),
            (.post, "/files//", [:], .notFound(.tus)),
            (.post, "/filesx", [:], .creation(.multipart)),
            (.post, "//files", [:], .creation(.multipart)),
            (.post, "/FILES", draft, .creation(.ietf)),
            (.post, "/upload", [:], .creation(.multipart)),
            (.put, "/upload", draft, .creation(.ietf)),
            (.patch, "/upload", draft, .resumable(.ietf)),
            (.options, "/upload", [:], .resumable(.ietf)),
            (.post, "/uploads", draft, .notFound(.ietf)),
            (.post, "/uploads/", draft, .notFound(.ietf)),
            (.patch, "/uploads/" + id, [:], .upload(.ietf, id: id)),
            (.get, "/", [:], .page),
            (.post, "/", [:], .creation(.multipart)),
            (.get, "/healthz", [:], .health),
            (.head, "/readyz", [:], .health),
            (.post, "/readyz", [:], .creation(.multipart)),
            (.get, "/metrics", [:], .metrics),
            (.get, "/anything", [:], .other),
            (.delete, "/upload", [:], .other),
        ]
        for (method, path, headers, route) in cases {
            #expect(router.route(method: method, path: path, headers: headers) == route, "\(method) \(path)")
        }
        let bare = ReceiverRouter(tusBasePath: nil, resumableBasePath: nil)
        #expect(bare.route(method: .get, path: "/", headers: [:]) == .other)
        #expect(bare.route(method: .get, path: "/healthz", headers: [:]) == .other)
        #expect(bare.route(method: .post, path: "/files/", headers: [:]) == .creation(.multipart))
    }
}
