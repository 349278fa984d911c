import FormPost
import FormPostServer
import Foundation
import Logging
import Multipart

/// `formpost-bench resumable`: a file sent with tus (``TusUploader``, its default request
/// size; then again with the checksums the receiver offers) against the same file sent as a plain
/// multipart upload, both over loopback to one in-process receiver (`UploadServer` with its
/// tus and IETF-draft receivers), which stores both on disk — alternating. Then the cost of
/// one resume: an upload cancelled halfway and run again (it resumes from the server's
/// offset) against the uninterrupted uploads' median. Last, the same one-file form sent
/// resumably with the IETF draft (``ResumableUploader``; the receiver parses it once
/// complete) against the plain upload.
struct ResumableBenchmarks {
    let size: Int
    let runs: Int
    let directory: String

    func run() async throws {
        let source = directory + "/upload.bin"
        try Filler.file(at: source, count: size)
        defer { unlink(source) }
        let stored = directory + "/stored"
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: stored, maxBodySize: 1 << 40, maxFileSize: 1 << 40)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: try TusReceiver(configuration: configuration, logger: logger),
                                  resumable: try ResumableUploadReceiver(receiver: receiver, logger: logger))
        let running = try await RunningServer(server)
        defer { running.stop() }
        let port = running.port

        let client = FormPostClient()
        var form = MultipartForm()
        try form.append(name: "file", fileAt: source)
        let plainURL = URL(string: "http://127.0.0.1:\(port)/upload")!
        let tusURL = URL(string: "http://127.0.0.1:\(port)/files")!
        let uploader = TusUploader(client: client, stateStore: ResumeStateStore(directory: directory + "/state"))
        let plain: () async throws -> Void = {
            let response = try await client.upload(form, to: plainURL)
            guard response.status == 200 else { throw BenchmarkFailure("the plain upload answered \(response.status)") }
            try StoredFiles.clear(stored)
        }
        let whole: (TusUploader) async throws -> Void = { uploader in
            let result = try await uploader.upload(fileAt: source, to: tusURL)
            guard result.bytesSent == Int64(size) else { throw BenchmarkFailure("tus sent \(result.bytesSent) of \(size) bytes") }
            try StoredFiles.clear(stored)
        }
        Measurement.resetPeakRSS()
        let times = try await Measurement.alternate(runs: runs, ours: { try await whole(uploader) }, theirs: plain)
        BenchmarkResult(workload: "upload-tus", bytes: Int64(size), ours: times.ours, reference: "plain multipart upload", theirs: times.theirs,
                        peakRSS: Measurement.peakRSS()).printLine()

        var checksummed = uploader
        checksummed.checksums = true
        Measurement.resetPeakRSS()
        let withChecksums = try await Measurement.alternate(runs: runs, ours: { try await whole(checksummed) }, theirs: plain)
        BenchmarkResult(workload: "upload-tus-checksums", bytes: Int64(size), ours: withChecksums.ours, reference: "plain multipart upload",
                        theirs: withChecksums.theirs, peakRSS: Measurement.peakRSS()).printLine()

        var resumed: [Double] = []
        for _ in 0..<runs {
            resumed.append(try await Measurement.time {
                let half = Int64(size / 2)
                let halfway = Halfway()
                let first = Task {
                    try await uploader.upload(fileAt: source, to: tusURL) { progress in
                        if progress.sent >= half { halfway.cancel() }
                    }
                }
                halfway.set(first)
                _ = try? await first.value
                let result = try await uploader.upload(fileAt: source, to: tusURL)
                guard result.resumedFrom > 0, result.resumedFrom + result.bytesSent == Int64(size) else {
                    throw BenchmarkFailure("the second run resumed from \(result.resumedFrom) and sent \(result.bytesSent)")
                }
            })
            try StoredFiles.clear(stored)
        }
        let uninterrupted = Measurement.median(times.ours)
        FileHandle.standardError.write(Data("upload-tus-resume: one resume costs \(String(format: "%.3f", Measurement.median(resumed) - uninterrupted)) s (median \(String(format: "%.3f", Measurement.median(resumed))) s cut and resumed, \(String(format: "%.3f", uninterrupted)) s uninterrupted)\n".utf8))
        BenchmarkResult(workload: "upload-tus-resume", bytes: Int64(size), ours: resumed, reference: "uninterrupted tus upload", theirs: times.ours,
                        peakRSS: Measurement.peakRSS()).printLine()

        let draft = ResumableUploader(client: client, stateStore: ResumeStateStore(directory: directory + "/state"))
        Measurement.resetPeakRSS()
        let forms = try await Measurement.alternate(runs: runs, ours: {
            let result = try await draft.upload(form, to: plainURL)
            guard result.response.status == 200, result.bytesSent == form.contentLength else {
                throw BenchmarkFailure("the resumable form answered \(result.response.status) after \(result.bytesSent) bytes")
            }
            try StoredFiles.clear(stored)
        }, theirs: plain)
        BenchmarkResult(workload: "upload-ietf-form", bytes: form.contentLength ?? 0, ours: forms.ours, reference: "plain multipart upload", theirs: forms.theirs,
                        peakRSS: Measurement.peakRSS()).printLine()
    }
}
