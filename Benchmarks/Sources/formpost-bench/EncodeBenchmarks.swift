import Foundation
import Multipart

/// `formpost-bench encode`: the three encoders against plain copies of the same bytes.
struct EncodeBenchmarks {
    let size: Int
    let runs: Int
    let directory: String

    func run() async throws {
        let source = directory + "/source.bin"
        try Filler.file(at: source, count: size)
        defer { unlink(source) }
        try await chunks(source: source).printLine()
        try await file(source: source).printLine()
        try await memory().printLine()
    }

    /// A form of ten fields and a 1 GiB file, read through the chunk reader; reference: a read() loop.
    func chunks(source: String) async throws -> BenchmarkResult {
        let chunkSize = 1 << 20
        var form = MultipartForm()
        for index in 0..<10 { form.append(name: "field\(index)", value: "value \(index)") }
        try form.append(name: "file", fileAt: source)
        let plan = try form.plan()
        Measurement.resetPeakRSS()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var produced: Int64 = 0
        let times = try await Measurement.alternate(runs: runs, ours: {
            let reader = plan.makeChunkReader(chunkSize: chunkSize)
            produced = 0
            while true {
                let count = try await reader.read(into: buffer)
                if count == 0 { break }
                produced += Int64(count)
            }
        }, theirs: {
            let descriptor = open(source, O_RDONLY)
            defer { close(descriptor) }
            while read(descriptor, buffer.baseAddress, chunkSize) > 0 {}
        })
        guard produced == plan.contentLength else { throw BenchmarkFailure("chunk reader produced \(produced) bytes") }
        return BenchmarkResult(workload: "encode-chunks", bytes: produced, ours: times.ours, reference: "read() loop, same chunk size", theirs: times.theirs, peakRSS: Measurement.peakRSS())
    }

    /// A form with one 1 GiB file written to a new file; reference: a read/write copy loop
    /// writing the same file's bytes to a new file in the same directory.
    ///
    /// What it measures is the encoder's copy into the page cache, not the disk: before each
    /// run of either side, untimed, both outputs are removed and `sync()` writes back what
    /// earlier runs left dirty, so that no run is slowed by another's writeback (the dirty
    /// limits of a machine with a few GiB of memory are above 1 GiB); neither side's time
    /// includes flushing what it wrote. Without the `sync`, each run paid for the writeback
    /// of the one before, at the disk's speed, and runs of the same side swung twofold.
    func file(source: String) async throws -> BenchmarkResult {
        var form = MultipartForm()
        try form.append(name: "file", fileAt: source)
        let plan = try form.plan()
        let output = directory + "/encoded.bin"
        let copy = directory + "/copy.bin"
        Measurement.resetPeakRSS()
        let times = try await Measurement.alternate(runs: runs, prepare: {
            unlink(output)
            unlink(copy)
            sync()
        }, ours: {
            try await plan.write(toFile: output)
        }, theirs: {
            try plainCopy(from: source, to: copy)
        })
        defer { unlink(output); unlink(copy) }
        let written = Int64((try FileManager.default.attributesOfItem(atPath: output)[.size] as? NSNumber)?.int64Value ?? 0)
        guard written == plan.contentLength else { throw BenchmarkFailure("file encoder wrote \(written) bytes") }
        return BenchmarkResult(workload: "encode-file", bytes: written, ours: times.ours, reference: "read/write copy loop, 1 MiB buffer", theirs: times.theirs, peakRSS: Measurement.peakRSS())
    }

    /// Ten fields and a 1 GiB data part encoded in memory; reference: copying the 1 GiB into a fresh buffer.
    func memory() async throws -> BenchmarkResult {
        let content = Filler.bytes(size, seed: 3)
        var form = MultipartForm()
        for index in 0..<10 { form.append(name: "field\(index)", value: "value \(index)") }
        form.append(name: "data", bytes: content, filename: "data.bin")
        let plan = try form.plan()
        Measurement.resetPeakRSS()
        var encodedCount = 0
        let times = try await Measurement.alternate(runs: runs, ours: {
            let data = try await plan.encodedData()
            encodedCount = data.count
        }, theirs: {
            let fresh = UnsafeMutableRawBufferPointer.allocate(byteCount: content.count, alignment: 16)
            content.withUnsafeBytes { fresh.copyMemory(from: $0) }
            blackHole(fresh[content.count / 2])
            fresh.deallocate()
        })
        guard Int64(encodedCount) == plan.contentLength else { throw BenchmarkFailure("memory encoder produced \(encodedCount) bytes") }
        return BenchmarkResult(workload: "encode-memory", bytes: Int64(encodedCount), ours: times.ours, reference: "memcpy into a fresh buffer", theirs: times.theirs, peakRSS: Measurement.peakRSS())
    }

    private func plainCopy(from source: String, to destination: String) throws {
        let input = open(source, O_RDONLY)
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        defer { close(input); close(output) }
        guard input >= 0, output >= 0 else { throw BenchmarkFailure("cannot open copy files") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(input, buffer.baseAddress, buffer.count)
            if count <= 0 { break }
            var done = 0
            while done < count { done += write(output, buffer.baseAddress! + done, count - done) }
        }
    }
}

/// A benchmark that could not produce a trustworthy figure.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
