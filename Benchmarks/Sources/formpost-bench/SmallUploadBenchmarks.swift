#if os(macOS) || os(Linux)
import AsyncHTTPClient
import FormPost
import Foundation
import Multipart
import NIOCore
import NIOSSL

/// `formpost-bench small`: 1,000 forms of ten text fields and a 4 KiB file, one after another
/// or 16 at once, through one ``FormPostClient`` (the default encoding strategy), against
/// AsyncHTTPClient's own `HTTPClient.execute` sending the same head fields and body bytes
/// on a client with the same configuration and event loop group, alternating, to the byte
/// sink in another process:
/// - `small-http1`, `small-http1-16`: plaintext HTTP/1.1, one at a time and 16 at once;
/// - `small-https-h1`: HTTPS through nginx (as `upload`'s rows), HTTP/1.1, one at a time;
/// - `small-https-h2-16`: HTTPS through nginx, HTTP/2, 16 at once (one connection multiplexed);
/// - `small-urlsession`, `small-urlsession-16`: the same on the URLSession transport
///   (``SmallURLSessionBenchmarks``);
/// - `small-tus`: 4 KiB files, each a new tus upload (``SmallResumableBenchmarks``).
///
/// Each line's `seconds` is a median run of 1,000 uploads; requests per second go to
/// standard error.
struct SmallUploadBenchmarks {
    let runs: Int
    let directory: String
    /// Uploads a timed run sends.
    static let uploads = 1_000

    /// One row: where to, with what client configuration, how many at once, over which HTTP version.
    private struct Row {
        let workload: String
        let url: URL
        let configuration: HTTPClient.Configuration
        let atOnce: Int
        let version: String
    }

    func run() async throws {
        let file = directory + "/small.bin"
        try Filler.file(at: file, count: 4096)
        defer { unlink(file) }
        var form = MultipartForm()
        for index in 0..<10 { form.append(name: "field\(index)", value: "value of text field number \(index)") }
        try form.append(name: "file", fileAt: file)

        let sink = try SinkProcess.launched()
        defer { sink.stop() }
        let port = sink.port
        let endpoint = try TLSEndpoint(directory: directory, upstreamPort: port)
        defer { endpoint.stop() }

        var plain = HTTPClient.Configuration()
        plain.httpVersion = .http1Only
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(endpoint.caPath)
        var https1 = plain
        https1.tlsConfiguration = tls
        var https2 = https1
        https2.httpVersion = .automatic
        let rows = [
            Row(workload: "small-http1", url: URL(string: "http://127.0.0.1:\(port)/upload")!, configuration: plain, atOnce: 1, version: "1.1"),
            Row(workload: "small-http1-16", url: URL(string: "http://127.0.0.1:\(port)/upload")!, configuration: plain, atOnce: 16, version: "1.1"),
            Row(workload: "small-https-h1", url: URL(string: "https://localhost:\(endpoint.http1Port)/upload")!, configuration: https1, atOnce: 1, version: "1.1"),
            Row(workload: "small-https-h2-16", url: URL(string: "https://localhost:\(endpoint.http2Port)/upload")!, configuration: https2, atOnce: 16, version: "2"),
        ]
        for row in rows { try await measure(row, form: form) }
        try await SmallURLSessionBenchmarks(runs: runs, form: form, sinkPort: Int(port)).run()
        #if os(Linux)
        try await SmallResumableBenchmarks(runs: runs, file: file).run()
        #endif
    }

    /// Times a run of ``uploads`` through FormPost against one through raw AsyncHTTPClient,
    /// alternating, and prints the line.
    private func measure(_ row: Row, form: MultipartForm) async throws {
        let transport = AsyncHTTPClientTransport(configuration: row.configuration)
        // What FormPost's own client is made with (AsyncHTTPClientTransport's init).
        var rawConfiguration = row.configuration
        rawConfiguration.redirectConfiguration = .disallow
        rawConfiguration.decompression = .disabled
        let raw = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: rawConfiguration)
        try await Self.shuttingDown(transport, raw) {
            let client = FormPostClient(transport: transport)
            // The same head fields and body bytes as FormPost sends.
            let request = try client.requestSerializer.multipartRequest(.post, row.url, form: form, headers: [:])
            let plan = try form.plan()
            let body = ByteBuffer(bytes: try await plan.encodedBytes())
            var outgoing = HTTPClientRequest(url: row.url.absoluteString)
            outgoing.method = .POST
            for field in request.headers { outgoing.headers.add(name: field.name.rawName, value: field.value) }
            outgoing.headers.replaceOrAdd(name: "Content-Type", value: plan.contentType)
            outgoing.body = .bytes(body)
            let sent = outgoing
            let expected = "\(body.readableBytes)"
            let times = try await Measurement.alternate(runs: runs, ours: {
                try await Self.repeatUploads(atOnce: row.atOnce) {
                    let response = try await client.upload(form, to: row.url)
                    guard response.status == 200, response.text == expected, response.httpVersion == row.version else {
                        throw BenchmarkFailure("\(row.workload): the sink received \(response.text) of \(expected) bytes (status \(response.status), HTTP/\(response.httpVersion ?? "?"))")
                    }
                }
            }, theirs: {
                try await Self.repeatUploads(atOnce: row.atOnce) {
                    let response = try await raw.execute(sent, timeout: .seconds(30))
                    let answer = String(buffer: try await response.body.collect(upTo: 1 << 20))
                    let version = response.version.major >= 2 ? "2" : "1.1"
                    guard response.status == .ok, answer == expected, version == row.version else {
                        throw BenchmarkFailure("\(row.workload): raw AsyncHTTPClient: the sink received \(answer) of \(expected) bytes (status \(response.status.code), HTTP/\(version))")
                    }
                }
            })
            Self.report(row.workload, times: times, uploadBytes: body.readableBytes, reference: "AsyncHTTPClient execute", referenceName: "raw AsyncHTTPClient")
        }
    }

    /// Runs `body` with `transport` and `raw`, and shuts both down however it ends.
    static func shuttingDown(_ transport: AsyncHTTPClientTransport, _ raw: HTTPClient, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            try? await transport.shutdown()
            try? await raw.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await raw.shutdown()
    }

    /// Prints a row's uploads per second (standard error) and its JSON line.
    static func report(_ workload: String, times: (ours: [Double], theirs: [Double]), uploadBytes: Int, reference: String, referenceName: String) {
        let ours = Double(uploads) / Measurement.median(times.ours)
        let theirs = Double(uploads) / Measurement.median(times.theirs)
        FileHandle.standardError.write(Data("\(workload): \(Int(ours)) uploads/s; \(referenceName) \(Int(theirs)) uploads/s\n".utf8))
        BenchmarkResult(workload: workload, bytes: Int64(uploads * uploadBytes), ours: times.ours, reference: reference,
                        theirs: times.theirs, peakRSS: Measurement.peakRSS()).printLine()
    }

    /// Runs `upload` ``uploads`` times, `atOnce` at a time.
    static func repeatUploads(atOnce: Int, _ upload: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<uploads {
                if index >= atOnce { try await group.next() }
                group.addTask { try await upload() }
            }
            try await group.waitForAll()
        }
    }
}
#endif
