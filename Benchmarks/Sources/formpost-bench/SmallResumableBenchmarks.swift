#if os(Linux)
import AsyncHTTPClient
import FormPost
import FormPostServer
import Foundation
import Logging
import Multipart
import NIOCore

/// The resumable row of `formpost-bench small`, `small-tus`: 1,000 files of 4 KiB, one at a
/// time, each a new tus upload through one ``TusUploader`` (no state store: the requests
/// alone) — `OPTIONS`, `POST` creating the upload, `PATCH` with the bytes — against raw
/// AsyncHTTPClient sending the same three requests with the same head fields and body,
/// alternating, to one in-process tus receiver storing on `/dev/shm` (so that no disk write
/// hides the clients' cost).
struct SmallResumableBenchmarks {
    let runs: Int
    let file: String

    func run() async throws {
        let stored = "/dev/shm/formpost-bench-small-\(getpid())"
        try FileManager.default.createDirectory(atPath: stored, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: stored) }
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: stored, maxUploadsInProgress: 100_000, maxUploadsInProgressPerClient: 100_000)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: try TusReceiver(configuration: configuration, logger: logger))
        let running = try await RunningServer(server)
        defer { running.stop() }
        let port = running.port
        let endpoint = URL(string: "http://127.0.0.1:\(port)/files")!

        var plain = HTTPClient.Configuration()
        plain.httpVersion = .http1Only
        let transport = AsyncHTTPClientTransport(configuration: plain)
        var rawConfiguration = plain
        rawConfiguration.redirectConfiguration = .disallow
        rawConfiguration.decompression = .disabled
        let raw = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: rawConfiguration)
        try await SmallUploadBenchmarks.shuttingDown(transport, raw) {
            let uploader = TusUploader(client: FormPostClient(transport: transport), stateStore: nil)
            let bytes = ByteBuffer(bytes: try Array(Data(contentsOf: URL(fileURLWithPath: file))))
            let metadata = ["filename": (file as NSString).lastPathComponent, "filetype": "application/octet-stream"]
                .sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
            let times = try await Measurement.alternate(runs: runs, ours: {
                for _ in 0..<SmallUploadBenchmarks.uploads {
                    let result = try await uploader.upload(fileAt: file, to: endpoint)
                    guard result.bytesSent == Int64(bytes.readableBytes) else { throw BenchmarkFailure("small-tus: sent \(result.bytesSent) bytes") }
                }
            }, theirs: {
                for _ in 0..<SmallUploadBenchmarks.uploads {
                    try await Self.rawUpload(bytes, metadata: metadata, to: endpoint, on: raw)
                }
            })
            SmallUploadBenchmarks.report("small-tus", times: times, uploadBytes: bytes.readableBytes, reference: "AsyncHTTPClient execute, the same three requests",
                                         referenceName: "raw AsyncHTTPClient")
        }
    }

    /// A tus upload as an application writes it on AsyncHTTPClient: `OPTIONS`, `POST`, `PATCH`.
    private static func rawUpload(_ bytes: ByteBuffer, metadata: String, to endpoint: URL, on client: HTTPClient) async throws {
        var options = HTTPClientRequest(url: endpoint.absoluteString)
        options.method = .OPTIONS
        options.headers.add(name: "Tus-Resumable", value: "1.0.0")
        let offered = try await client.execute(options, timeout: .seconds(30))
        _ = try await offered.body.collect(upTo: 1 << 20)
        guard offered.status == .noContent || offered.status == .ok else { throw BenchmarkFailure("small-tus: OPTIONS answered \(offered.status.code)") }

        var creation = HTTPClientRequest(url: endpoint.absoluteString)
        creation.method = .POST
        creation.headers.add(name: "Tus-Resumable", value: "1.0.0")
        creation.headers.add(name: "Upload-Length", value: String(bytes.readableBytes))
        creation.headers.add(name: "Upload-Metadata", value: metadata)
        let created = try await client.execute(creation, timeout: .seconds(30))
        _ = try await created.body.collect(upTo: 1 << 20)
        guard created.status == .created, let location = created.headers.first(name: "Location"),
              let upload = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
            throw BenchmarkFailure("small-tus: the creation answered \(created.status.code)")
        }

        var append = HTTPClientRequest(url: upload.absoluteString)
        append.method = .PATCH
        append.headers.add(name: "Tus-Resumable", value: "1.0.0")
        append.headers.add(name: "Upload-Offset", value: "0")
        append.headers.add(name: "Content-Type", value: "application/offset+octet-stream")
        append.body = .bytes(bytes)
        let appended = try await client.execute(append, timeout: .seconds(30))
        _ = try await appended.body.collect(upTo: 1 << 20)
        guard appended.status == .noContent, appended.headers.first(name: "Upload-Offset") == String(bytes.readableBytes) else {
            throw BenchmarkFailure("small-tus: the append answered \(appended.status.code)")
        }
    }
}
#endif
