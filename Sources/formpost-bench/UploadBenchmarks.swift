import FormPost
import Foundation
import Multipart

/// `formpost-bench upload`: a form with one file uploaded to a byte-counting sink in
/// another process, against `curl -F file=@…` to the same sink, alternating.
struct UploadBenchmarks {
    let size: Int
    let runs: Int
    let directory: String

    func run() async throws {
        let source = directory + "/upload.bin"
        try Filler.file(at: source, count: size)
        defer { unlink(source) }
        let port = UInt16(20000 + Int(getpid() % 20000))
        let sink = Process()
        sink.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        sink.arguments = ["sink", "\(port)"]
        let ready = Pipe()
        sink.standardOutput = ready
        try sink.run()
        defer { sink.terminate() }
        _ = ready.fileHandleForReading.availableData
        let url = URL(string: "http://127.0.0.1:\(port)/upload")!
        var form = MultipartForm()
        try form.append(name: "file", fileAt: source)
        let client = FormPostClient()
        let expected = form.contentLength ?? 0
        Measurement.resetPeakRSS()
        let baseline = Measurement.currentRSS()
        let times = try await Measurement.alternate(runs: runs, ours: {
            let response = try await client.upload(form, to: url, strategy: .streaming)
            guard response.status == 200, response.text == "\(expected)" else {
                throw BenchmarkFailure("the sink received \(response.text) of \(expected) bytes")
            }
        }, theirs: {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-F", "file=@\(source)", url.absoluteString]
            let output = Pipe()
            curl.standardOutput = output
            try curl.run()
            let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            guard status == "200" else { throw BenchmarkFailure("curl got \(status)") }
        })
        let peak = Measurement.peakRSS()
        FileHandle.standardError.write(Data("upload: resident \(baseline >> 20) MiB before the runs, peak \(peak >> 20) MiB\n".utf8))
        BenchmarkResult(workload: "upload", bytes: expected, ours: times.ours, reference: "curl -F", theirs: times.theirs, peakRSS: peak).printLine()
    }
}
