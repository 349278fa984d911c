#if os(macOS) || os(Linux)
import AsyncHTTPClient
import FormPost
import Foundation
import Multipart
import NIOSSL

/// `formpost-bench upload`: a form with one file uploaded to a byte-counting sink in
/// another process, against `curl -F file=@…` to the same endpoint, alternating:
/// - `upload`: plaintext HTTP/1.1 straight to the sink;
/// - `upload-https-h1` and `upload-https-h2`: HTTPS through nginx (TLS terminated there,
///   the body streamed on to the sink), on HTTP/1.1 and on HTTP/2, curl asked for the
///   same protocol and checked to have used it;
/// - `upload-https-h2-16` (`formpost-bench concurrent`, a process of its own): sixteen
///   uploads at once of a file a sixteenth of the size, over one HTTP/2 connection through
///   nginx, against `curl --parallel` with sixteen transfers;
/// - `upload-https-h2-window-1m`: the same on HTTP/2 where nginx grants a 1 MiB stream
///   window instead of its default 64 KiB, so that the upload is not paced by window updates;
/// - `upload-https-h1-buffered` and `upload-https-h2-buffered`: nginx's defaults, the whole
///   body buffered to disk before it goes on to the sink.
///
/// Each line gives our peak RSS (this process, reset before the workload) and curl's
/// (the largest of its runs), and for the single uploads the CPU seconds each side's
/// process used (`cpu_seconds`, `reference_cpu_seconds`, medians; `cpu_ratio` ours over
/// curl's). With `--busy N`, N processes spinning on the CPU run throughout, as on a
/// machine where the client's CPU competes with others'. `--only NAME,…` runs only the
/// single-upload rows named. On macOS and Linux only, as the programs it starts.
struct UploadBenchmarks {
    let size: Int
    let runs: Int
    let directory: String
    /// The single-upload rows to run; nil for all.
    var only: Set<String>? = nil

    func run() async throws {
        try await withFileFormAndSink(size: size, directory: directory) { source, form, port in
            try await run(source: source, form: form, port: port)
        }
    }

    private func run(source: String, form: MultipartForm, port: UInt16) async throws {
        if only?.contains("upload") ?? true {
            try await measure("upload", form: form, source: source, url: "http://127.0.0.1:\(port)/upload", transport: .shared, curlArguments: [], version: "1.1")
        }

        let endpoint = try TLSEndpoint(directory: directory, upstreamPort: port)
        defer { endpoint.stop() }
        let workloads = [("upload-https-h1", endpoint.http1Port, "1.1"), ("upload-https-h2", endpoint.http2Port, "2"),
                         ("upload-https-h2-window-1m", endpoint.http2WideWindowPort, "2"),
                         ("upload-https-h1-buffered", endpoint.http1BufferedPort, "1.1"), ("upload-https-h2-buffered", endpoint.http2BufferedPort, "2")]
        for (workload, endpointPort, version) in workloads where only?.contains(workload) ?? true {
            try await withTLSTransport(caPath: endpoint.caPath, http2: version == "2") { transport in
                try await measure(workload, form: form, source: source, url: "https://localhost:\(endpointPort)/upload", transport: transport,
                                  curlArguments: ["--cacert", endpoint.caPath, version == "2" ? "--http2" : "--http1.1"], version: version)
            }
        }
    }

    /// `formpost-bench caller-client`: the plaintext upload through an `HTTPClient` the
    /// application made with AsyncHTTPClient's defaults (`upload-caller-client`) against the
    /// same through FormPost's own client (file parts by `sendfile`), alternating. FormPost
    /// cannot know where a caller's client sends a body after a redirect (it follows them
    /// itself, to https too), so file parts go there as recycled buffers, never by `sendfile`.
    func runCallerClient() async throws {
        try await withFileFormAndSink(size: size, directory: directory) { _, form, port in
            let callerClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
            do {
                try await compare(form: form, url: URL(string: "http://127.0.0.1:\(port)/upload")!, callerClient: callerClient)
            } catch {
                try? await callerClient.shutdown()
                throw error
            }
            try await callerClient.shutdown()
        }
    }

    private func compare(form: MultipartForm, url: URL, callerClient: HTTPClient) async throws {
        let own = FormPostClient(transport: AsyncHTTPClientTransport.shared)
        let caller = FormPostClient(transport: AsyncHTTPClientTransport(client: callerClient))
        let expected = form.contentLength ?? 0
        func upload(_ client: FormPostClient) async throws {
            let response = try await client.upload(form, to: url, strategy: .streaming)
            guard response.status == 200, response.text == "\(expected)" else {
                throw BenchmarkFailure("upload-caller-client: the sink received \(response.text) of \(expected) bytes (status \(response.status))")
            }
        }
        Measurement.resetPeakRSS()
        let times = try await Measurement.alternate(runs: runs, ours: { try await upload(caller) }, theirs: { try await upload(own) })
        BenchmarkResult(workload: "upload-caller-client", bytes: expected, ours: times.ours, reference: "FormPost's own client (sendfile)",
                        theirs: times.theirs, peakRSS: Measurement.peakRSS()).printLine()
    }

    /// `formpost-bench concurrent`: only `upload-https-h2-16`, in a process that ran nothing
    /// before, so that its peak RSS is what a program doing just that would reach.
    func runConcurrent() async throws {
        let sink = try SinkProcess.launched()
        defer { sink.stop() }
        let port = sink.port
        let endpoint = try TLSEndpoint(directory: directory, upstreamPort: port)
        defer { endpoint.stop() }
        try await withTLSTransport(caPath: endpoint.caPath, http2: true) { transport in
            try await measureConcurrent(url: "https://localhost:\(endpoint.http2Port)/upload", transport: transport, caPath: endpoint.caPath)
        }
    }

    /// Runs `work` with a transport trusting the CA at `caPath`, offering HTTP/2 or not, and shuts it down.
    private func withTLSTransport(caPath: String, http2: Bool, _ work: (AsyncHTTPClientTransport) async throws -> Void) async throws {
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caPath)
        configuration.tlsConfiguration = tls
        configuration.httpVersion = http2 ? .automatic : .http1Only
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        do {
            try await work(transport)
            try await transport.shutdown()
        } catch {
            try? await transport.shutdown()
            throw error
        }
    }

    /// Times sixteen uploads at once of a file of `size / 16` bytes through one client over
    /// HTTP/2 against `curl --parallel` sending the same sixteen forms, alternating, and
    /// prints the line: the bytes of all sixteen, each side's peak RSS.
    private func measureConcurrent(url: String, transport: AsyncHTTPClientTransport, caPath: String) async throws {
        let workload = "upload-https-h2-16", uploads = 16
        let source = directory + "/concurrent.bin"
        try Filler.file(at: source, count: size / uploads)
        defer { unlink(source) }
        var concurrentForm = MultipartForm()
        try concurrentForm.append(name: "file", fileAt: source)
        let form = concurrentForm
        let client = FormPostClient(transport: transport)
        let target = URL(string: url)!
        let expected = form.contentLength ?? 0
        let transfer = ["--cacert", caPath, "--http2", "-F", "file=@\(source)", url]
        let curlArguments = ["--parallel", "--parallel-max", String(uploads)] + transfer
            + (1..<uploads).flatMap { _ in ["--next"] + CurlRun.perTransfer + transfer }
        Measurement.resetPeakRSS()
        var curlPeak: Int64 = 0
        let times = try await Measurement.alternate(runs: runs, ours: {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<uploads {
                    group.addTask {
                        let response = try await client.upload(form, to: target, strategy: .streaming)
                        guard response.status == 200, response.text == "\(expected)", response.httpVersion == "2" else {
                            throw BenchmarkFailure("\(workload): the sink received \(response.text) of \(expected) bytes (status \(response.status), HTTP/\(response.httpVersion ?? "?"))")
                        }
                    }
                }
                try await group.waitForAll()
            }
        }, theirs: {
            let run = try CurlRun(arguments: curlArguments)
            guard run.transfers == Array(repeating: "200 2", count: uploads) else {
                throw BenchmarkFailure("\(workload): curl's transfers ended \(run.transfers), expected \(uploads) × 200 over HTTP/2")
            }
            curlPeak = max(curlPeak, run.peakRSS)
        })
        let peak = Measurement.peakRSS()
        FileHandle.standardError.write(Data("\(workload): peak \(peak >> 20) MiB; curl peak \(curlPeak >> 20) MiB\n".utf8))
        BenchmarkResult(workload: workload, bytes: expected * Int64(uploads), ours: times.ours, reference: "curl --parallel -F", theirs: times.theirs,
                        peakRSS: peak, referencePeakRSS: curlPeak).printLine()
    }

    /// Times our upload of `form` against curl's of the same file, alternating, and prints the line.
    private func measure(_ workload: String, form: MultipartForm, source: String, url: String, transport: AsyncHTTPClientTransport,
                         curlArguments: [String], version: String) async throws {
        let client = FormPostClient(transport: transport)
        let target = URL(string: url)!
        let expected = form.contentLength ?? 0
        Measurement.resetPeakRSS()
        let baseline = Measurement.currentRSS()
        var curlPeak: Int64 = 0
        var cpu: [Double] = [], curlCPU: [Double] = []
        let times = try await Measurement.alternate(runs: runs, ours: {
            let spent = try await CPUTime.spent {
                let response = try await client.upload(form, to: target, strategy: .streaming)
                guard response.status == 200, response.text == "\(expected)" else {
                    throw BenchmarkFailure("\(workload): the sink received \(response.text) of \(expected) bytes (status \(response.status))")
                }
            }
            cpu.append(spent)
        }, theirs: {
            let run = try CurlRun(arguments: curlArguments + ["-F", "file=@\(source)", url])
            guard run.status == "200", run.httpVersion == version else {
                throw BenchmarkFailure("\(workload): curl got status \(run.status) over HTTP/\(run.httpVersion), expected 200 over HTTP/\(version)")
            }
            curlPeak = max(curlPeak, run.peakRSS)
            curlCPU.append(run.cpuSeconds)
        })
        let peak = Measurement.peakRSS()
        FileHandle.standardError.write(Data("\(workload): resident \(baseline >> 20) MiB before the runs, peak \(peak >> 20) MiB; curl peak \(curlPeak >> 20) MiB\n".utf8))
        // The first run of each side is the warm-up.
        BenchmarkResult(workload: workload, bytes: expected, ours: times.ours, reference: "curl -F", theirs: times.theirs, peakRSS: peak,
                        referencePeakRSS: curlPeak, cpu: Array(cpu.dropFirst()), referenceCPU: Array(curlCPU.dropFirst())).printLine()
    }
}
#endif
