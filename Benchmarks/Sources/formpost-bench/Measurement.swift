import Foundation

/// One benchmark's result, printed as a JSON line.
struct BenchmarkResult: Encodable {
    let workload: String
    let bytes: Int64
    let seconds: Double
    let mbps: Double
    let reference: String
    let reference_mbps: Double
    let ratio: Double
    let peak_rss_mib: Double
    let reference_peak_rss_mib: Double?
    /// The fastest and slowest of our timed runs, and of the reference's: the spread the
    /// medians come from.
    let seconds_range: [Double]
    let reference_seconds_range: [Double]
    /// Median CPU seconds (user and system) of our runs and of the reference's, and ours
    /// over theirs (below 1: less CPU per byte than the reference), where measured.
    let cpu_seconds: Double?
    let reference_cpu_seconds: Double?
    let cpu_ratio: Double?

    /// Builds the result from the medians of our runs and the reference's, and of their CPU
    /// seconds where given (`cpu` ours, `referenceCPU` theirs, a figure per run).
    init(workload: String, bytes: Int64, ours: [Double], reference: String, theirs: [Double], peakRSS: Int64, referencePeakRSS: Int64? = nil,
         cpu: [Double]? = nil, referenceCPU: [Double]? = nil) {
        let seconds = Measurement.median(ours)
        let referenceSeconds = Measurement.median(theirs)
        self.workload = workload
        self.bytes = bytes
        self.seconds = seconds
        self.mbps = Double(bytes) / seconds / 1e6
        self.reference = reference
        self.reference_mbps = Double(bytes) / referenceSeconds / 1e6
        self.ratio = referenceSeconds / seconds
        self.peak_rss_mib = Double(peakRSS) / 1_048_576
        self.reference_peak_rss_mib = referencePeakRSS.map { Double($0) / 1_048_576 }
        seconds_range = [ours.min() ?? .nan, ours.max() ?? .nan]
        reference_seconds_range = [theirs.min() ?? .nan, theirs.max() ?? .nan]
        cpu_seconds = cpu.map(Measurement.median)
        reference_cpu_seconds = referenceCPU.map(Measurement.median)
        if let cpu_seconds, let reference_cpu_seconds { cpu_ratio = cpu_seconds / reference_cpu_seconds } else { cpu_ratio = nil }
    }

    func printLine() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let line = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// Timing and memory measurement helpers.
enum Measurement {
    /// Seconds taken by `work`.
    static func time(_ work: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await work()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Runs `ours` and `theirs` alternately: one warm-up each, then `runs` timed runs each;
    /// `prepare`, untimed, before every run of either.
    static func alternate(runs: Int, prepare: () throws -> Void = {}, ours: () async throws -> Void,
                          theirs: () async throws -> Void) async throws -> (ours: [Double], theirs: [Double]) {
        func timed(_ work: () async throws -> Void) async throws -> Double {
            try prepare()
            return try await time(work)
        }
        _ = try await timed(theirs)
        _ = try await timed(ours)
        var oursTimes: [Double] = []
        var theirTimes: [Double] = []
        for _ in 0..<runs {
            theirTimes.append(try await timed(theirs))
            oursTimes.append(try await timed(ours))
        }
        if ProcessInfo.processInfo.environment["FORMPOST_BENCH_EACH_RUN"] != nil {
            FileHandle.standardError.write(Data("runs, seconds: ours \(oursTimes), reference \(theirTimes)\n".utf8))
        }
        return (oursTimes, theirTimes)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Resets the process's peak resident set size to its current size (Linux `clear_refs`).
    static func resetPeakRSS() {
        #if os(Linux)
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        #endif
    }

    /// The process's peak resident set size in bytes since the last reset (Linux `VmHWM`).
    static func peakRSS() -> Int64 { statusField("VmHWM:") }

    /// The process's current resident set size in bytes (Linux `VmRSS`).
    static func currentRSS() -> Int64 { statusField("VmRSS:") }

    /// A size in `/proc/self/status`, in bytes; 0 off Linux, which has no `/proc` (the
    /// figures are made on Linux).
    private static func statusField(_ field: String) -> Int64 {
        #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0
            return digits * 1024
        }
        #endif
        return 0
    }
}

/// Fast deterministic filler for benchmark content.
enum Filler {
    static func fill(_ buffer: UnsafeMutableRawBufferPointer, seed: UInt64) {
        var state = seed | 1
        let words = buffer.count / 8
        let typed = buffer.baseAddress!.bindMemory(to: UInt64.self, capacity: words)
        for index in 0..<words {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            typed[index] = state
        }
        for index in (words * 8)..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: index) }
    }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer), seed: seed)
            initialized = count
        }
    }

    /// Creates a file of `count` pseudo-random bytes at `path`.
    static func file(at path: String, count: Int) throws {
        let chunk = bytes(1 << 20, seed: 7)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var written = 0
        while written < count {
            let size = min(chunk.count, count - written)
            try handle.write(contentsOf: chunk[0..<size])
            written += size
        }
        try handle.close()
    }
}
