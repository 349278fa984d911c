#if os(Linux)
import AsyncHTTPClient
import Foundation
import FormPost
import Multipart
import NIOSSL
import Testing

/// Several large uploads at once through one ``FormPostClient``, over HTTPS through nginx
/// (HTTP/2: one connection, its streams multiplexed; HTTP/1.1: a connection each) to the test
/// server's slow reader. The uploads run in a child process of their own — the tests' own
/// executable, running ``ConcurrentUploadChild`` — which first sends one upload alone, then
/// the others `inFlight` at once. Its peak resident set (`VmHWM`) may grow past the peak of
/// the lone upload (the executable's own image, TLS, the pools and allocator arenas warmed)
/// by at most ``fixedGrowthMiB`` and 1 MiB per upload in flight, whatever the number of uploads and their size.
/// Linux only, as ``HTTPSTests``: nginx and `/proc`.
@Suite("Concurrent uploads' memory")
struct ConcurrentUploadMemoryTests {
    /// One run: `uploads` uploads of a file of `fileMiB`, `inFlight` at once.
    struct Case: Sendable, CustomTestStringConvertible {
        let http1Only: Bool
        let inFlight: Int
        let uploads: Int
        let fileMiB: Int
        var testDescription: String { "\(uploads) × \(fileMiB) MiB over \(http1Only ? "HTTP/1.1" : "HTTP/2"), \(inFlight) at once" }
    }

    /// What the peak may grow by whatever the number in flight: the allocator's arenas for the
    /// threads that now allocate at once, the connections' TLS and HTTP/2 state. Measured
    /// growth with the body bounded: 8–11 MiB; with a body read ahead of its connection, the
    /// file's size per upload in flight; with each upload's buffers kept after it ended
    /// (200 uploads of 1 MiB), half a MiB per upload.
    static let fixedGrowthMiB = 16

    @Test("uploads over one client, 16 or 4 at once, HTTP/2 and HTTP/1.1 over TLS: the peak RSS grows by at most 16 MiB + 1 MiB per upload in flight over one upload's, however many uploads",
          arguments: [Case(http1Only: false, inFlight: 16, uploads: 16, fileMiB: 32), Case(http1Only: false, inFlight: 4, uploads: 16, fileMiB: 32),
                      Case(http1Only: true, inFlight: 16, uploads: 16, fileMiB: 32), Case(http1Only: false, inFlight: 16, uploads: 200, fileMiB: 1)])
    func boundedPeak(_ run: Case) async throws {
        let (http1Only, inFlight) = (run.http1Only, run.inFlight)
        let directory = try SampleDirectory()
        let path = try directory.file("large.bin", size: run.fileMiB << 20, seed: 5)
        let report = directory.path + "/report"
        let fixtures = try await offPool { try TLSFixtures() }
        let server = try TestServer()
        let (finished, protocols) = try await server.run { base in
            let nginx = try await offPool { try NginxFront(fixtures: fixtures, upstreamPort: base.port ?? 0) }
            defer { nginx.stop() }
            let job = ConcurrentUploadJob(url: "https://localhost:\(nginx.port)/slow", caPath: fixtures.caPath, filePath: path,
                                          uploads: run.uploads, inFlight: inFlight, http1Only: http1Only, reportPath: report)
            let finished = try await offPool { try job.runInChild() }
            let protocols = try await nginx.protocolsLogged(atLeast: run.uploads)
            try await offPool { nginx.stop() }
            return (finished, protocols)
        }
        let output = String(decoding: finished.stdout + finished.stderr, as: UTF8.self)
        #expect(finished.status == 0, "the uploading child failed: \(output.suffix(4000))")
        let peaks = ((try? String(contentsOfFile: report, encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int($0) }
        try #require(peaks.count == 2, "no report from the child: \(output.suffix(4000))")
        let (lonePeakMiB, peakMiB) = (peaks[0] / 1024, peaks[1] / 1024)
        #expect(protocols == Array(repeating: http1Only ? "HTTP/1.1" : "HTTP/2.0", count: run.uploads))
        let bound = lonePeakMiB + Self.fixedGrowthMiB + inFlight
        print("concurrent uploads, \(run.testDescription): peak \(peakMiB) MiB, one alone \(lonePeakMiB) MiB (bound \(bound) MiB)")
        #expect(peakMiB <= bound, "the uploading process peaked at \(peakMiB) MiB, above \(bound) MiB (one upload alone: \(lonePeakMiB) MiB)")
    }
}

/// What ``ConcurrentUploadChild`` does: `uploads` uploads of the file at `filePath` to `url`,
/// trusting the CA at `caPath` — the first alone, the others `inFlight` at once; the peak
/// resident set after the first and at the end, in KiB, are written to `reportPath`. Handed
/// to the child in its environment.
struct ConcurrentUploadJob: Sendable {
    let url: String
    let caPath: String
    let filePath: String
    let uploads: Int
    let inFlight: Int
    let http1Only: Bool
    let reportPath: String

    private static let variable = "FORMPOST_CONCURRENT_UPLOAD_JOB"

    /// The job this process was started for, if it was.
    static var ofThisProcess: ConcurrentUploadJob? {
        guard let text = ProcessInfo.processInfo.environment[variable] else { return nil }
        let fields = text.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 7, let uploads = Int(fields[3]), let inFlight = Int(fields[4]) else { return nil }
        return ConcurrentUploadJob(url: fields[0], caPath: fields[1], filePath: fields[2], uploads: uploads, inFlight: inFlight,
                                   http1Only: fields[5] == "1", reportPath: fields[6])
    }

    /// Runs the tests' executable on ``ConcurrentUploadChild`` alone, with this job, and waits for it.
    func runInChild() throws -> ChildProcess.Finished {
        let encoded = [url, caPath, filePath, String(uploads), String(inFlight), http1Only ? "1" : "0", reportPath].joined(separator: "\t")
        let testsExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).path
        return try ChildProcess("env", ["\(Self.variable)=\(encoded)", testsExecutable, "--testing-library", "swift-testing",
                                        "--filter", "ConcurrentUploadChild"]).finish()
    }
}

/// The uploading child of ``ConcurrentUploadMemoryTests``: runs only in a process started
/// with a ``ConcurrentUploadJob``.
@Suite("Concurrent uploads' memory: the uploading process", .enabled(if: ConcurrentUploadJob.ofThisProcess != nil))
struct ConcurrentUploadChild {
    @Test("runs the job's uploads and reports its peak resident set")
    func upload() async throws {
        let job = try #require(ConcurrentUploadJob.ofThisProcess)
        var configuration = HTTPClient.Configuration(trusting: job.caPath)
        if job.http1Only { configuration.httpVersion = .http1Only }
        let url = try #require(URL(string: job.url))
        let (lonePeak, lengths) = try await withTransport(configuration) { transport in
            let client = FormPostClient(transport: transport)
            @Sendable func upload() async throws -> Int {
                var form = MultipartForm()
                try form.append(name: "big", fileAt: job.filePath)
                let response = try await client.upload(form, to: url, strategy: .streaming)
                #expect(response.status == 200)
                return try JSONDecoder().decode(Digest.self, from: Data(response.body)).length
            }
            let first = try await upload()
            let lonePeak = try peakResidentKiB()
            return try await withThrowingTaskGroup(of: Int.self) { group in
                var lengths = [first]
                for index in 1..<job.uploads {
                    if index > job.inFlight, let length = try await group.next() { lengths.append(length) }
                    group.addTask { try await upload() }
                }
                for try await length in group { lengths.append(length) }
                return (lonePeak, lengths)
            }
        }
        let fileSize = try #require(FileManager.default.attributesOfItem(atPath: job.filePath)[.size] as? Int)
        #expect(lengths.count == job.uploads)
        #expect(lengths.allSatisfy { $0 > fileSize })
        try "\(lonePeak) \(try peakResidentKiB())".write(toFile: job.reportPath, atomically: true, encoding: .utf8)
    }
}
#endif
