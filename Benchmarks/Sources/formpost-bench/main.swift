import Foundation

/// formpost-bench WORKLOAD [--size-mib N] [--runs N] [--busy N] [--only NAME,…]
///
/// Workloads: encode (encode-chunks, encode-file, encode-memory), parse, upload
/// (against curl -F; it starts `formpost-bench sink PORT` as a separate process; `--busy N`
/// keeps N processes spinning meanwhile, `--only` names the rows to run),
/// resumable (tus against a plain upload to the same receiver, and the cost of a resume),
/// small (1,000 small forms through one client against raw AsyncHTTPClient), concurrent
/// (16 uploads at once over HTTP/2 against curl --parallel, in a process of its own),
/// caller-client (the plaintext upload through FormPost's own client and through an
/// HTTPClient made with AsyncHTTPClient's defaults, each against curl -F), object-storage
/// (formpost serve --store into moto, then into Ceph RGW when installed: a form against
/// boto3's upload_file, and tus and draft uploads across two receivers against --dir;
/// --only s3 or rgw for one store; needs FORMPOST_BIN and moto: see ObjectStorageBenchmarks), vapor (Vapor apps receiving a large form and 2,000 small ones:
/// FormPostVapor against Vapor's own decoding and against FormPostServer on Hummingbird, with
/// each one's peak RSS: see VaporBenchmarks), receive-vs-nginx (formpost serve --dir against
/// nginx's upload offload, 16 curl -F of 64 MiB at once, and each one's memory per busy
/// connection; needs FORMPOST_BIN: see ReceiveVsNginxBenchmarks).
/// Prints one JSON line per workload: medians of --runs timed runs after a warm-up,
/// our runs alternating with the reference's.
let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

/// Runs `work` with a scratch directory that is removed afterwards.
func withScratchDirectory(_ work: (String) async throws -> Void) async throws {
    let directory = NSTemporaryDirectory() + "formpost-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try await work(directory)
}

let size = option("--size-mib", default: 1024) << 20
let runs = option("--runs", default: 5)
let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? Set(arguments[$0 + 1].split(separator: ",").map(String.init)) : nil }

do {
    switch arguments.first {
    case "encode": try await withScratchDirectory { try await EncodeBenchmarks(size: size, runs: runs, directory: $0).run() }
    case "parse": try await ParseBenchmarks(size: size, runs: runs).run()
    #if os(macOS) || os(Linux)
    case "upload":
        let busy = try BusyCores(count: option("--busy", default: 0))
        defer { busy.stop() }
        try await withScratchDirectory { try await UploadBenchmarks(size: size, runs: runs, directory: $0, only: only).run() }
    case "concurrent": try await withScratchDirectory { try await UploadBenchmarks(size: size, runs: runs, directory: $0).runConcurrent() }
    case "caller-client": try await withScratchDirectory { try await UploadBenchmarks(size: size, runs: runs, directory: $0).runCallerClient() }
    case "small": try await withScratchDirectory { try await SmallUploadBenchmarks(runs: runs, directory: $0).run() }
    #endif
    #if os(Linux)
    case "object-storage": try await withScratchDirectory { try await ObjectStorageBenchmarks(size: size, runs: runs, directory: $0, only: only).run() }
    case "vapor": try await withScratchDirectory { try await VaporBenchmarks(size: size, runs: runs, directory: $0).run() }
    case "receive-vs-nginx":
        try await withScratchDirectory {
            try await ReceiveVsNginxBenchmarks(size: option("--size-mib", default: 64) << 20, clients: option("--clients", default: 16), runs: runs, directory: $0).run()
        }
    #endif
    case "resumable": try await withScratchDirectory { try await ResumableBenchmarks(size: size, runs: runs, directory: $0).run() }
    case "sink": ByteSink.run(port: UInt16(arguments.dropFirst().first ?? "") ?? 8099)
    default:
        FileHandle.standardError.write(Data("usage: formpost-bench encode|parse|upload|concurrent|caller-client|resumable|small|object-storage|vapor|receive-vs-nginx [--size-mib N] [--runs N] [--busy N] [--only NAME,…] [--clients N]\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("formpost-bench: \(error)\n".utf8))
    exit(1)
}
