import Foundation

/// formpost-bench WORKLOAD [--size-mib N] [--runs N]
///
/// Workloads: encode (encode-chunks, encode-file, encode-memory), parse.
/// Prints one JSON line per workload: medians of --runs timed runs after a warm-up,
/// our runs alternating with the reference's.
let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

let size = option("--size-mib", default: 1024) << 20
let runs = option("--runs", default: 5)
let directory = NSTemporaryDirectory() + "formpost-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

do {
    switch arguments.first {
    case "encode": try await EncodeBenchmarks(size: size, runs: runs, directory: directory).run()
    case "parse": try await ParseBenchmarks(size: size, runs: runs).run()
    default:
        FileHandle.standardError.write(Data("usage: formpost-bench encode|parse [--size-mib N] [--runs N]\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("formpost-bench: \(error)\n".utf8))
    exit(1)
}
