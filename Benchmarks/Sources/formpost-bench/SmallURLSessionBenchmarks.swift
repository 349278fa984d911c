#if os(macOS) || os(Linux)
import FormPost
import FormPostURLSession
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Multipart

/// The rows of `formpost-bench small` on the URLSession transport: the same 1,000 forms
/// through one ``FormPostClient`` on a ``URLSessionTransport``, against URLSession itself
/// uploading the same head fields and body bytes (`uploadTask(with:from:)` on a session of
/// the same configuration), alternating, to the byte sink over plaintext HTTP/1.1:
/// - `small-urlsession`: one at a time;
/// - `small-urlsession-16`: 16 at once.
///
/// (On Linux, URLSession is FoundationNetworking's, on libcurl; it has no HTTPS with a
/// certificate authority of the benchmark's own, so the rows are plaintext.)
struct SmallURLSessionBenchmarks {
    let runs: Int
    let form: MultipartForm
    let sinkPort: Int

    func run() async throws {
        let url = URL(string: "http://127.0.0.1:\(sinkPort)/upload")!
        for atOnce in [1, 16] {
            let configuration = URLSessionConfiguration.default
            configuration.httpMaximumConnectionsPerHost = 16
            let transport = URLSessionTransport(configuration: configuration)
            let raw = URLSession(configuration: configuration)
            defer {
                transport.invalidate()
                raw.invalidateAndCancel()
            }
            let client = FormPostClient(transport: transport)
            // The same head fields and body bytes as FormPost sends.
            let plan = try form.plan()
            let body = Data(try await plan.encodedBytes())
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            for field in try client.requestSerializer.multipartRequest(.post, url, form: form, headers: [:]).headers {
                request.addValue(field.value, forHTTPHeaderField: field.name.rawName)
            }
            request.setValue(plan.contentType, forHTTPHeaderField: "Content-Type")
            request.setValue(String(body.count), forHTTPHeaderField: "Content-Length")
            let sent = request
            let expected = "\(body.count)"
            let workload = atOnce == 1 ? "small-urlsession" : "small-urlsession-\(atOnce)"
            let form = form
            let times = try await Measurement.alternate(runs: runs, ours: {
                try await SmallUploadBenchmarks.repeatUploads(atOnce: atOnce) {
                    let response = try await client.upload(form, to: url)
                    guard response.status == 200, response.text == expected else {
                        throw BenchmarkFailure("\(workload): the sink received \(response.text) of \(expected) bytes (status \(response.status))")
                    }
                }
            }, theirs: {
                try await SmallUploadBenchmarks.repeatUploads(atOnce: atOnce) {
                    let (data, response) = try await Self.upload(sent, body: body, on: raw)
                    let answer = String(decoding: data, as: UTF8.self)
                    guard response.statusCode == 200, answer == expected else {
                        throw BenchmarkFailure("\(workload): URLSession: the sink received \(answer) of \(expected) bytes (status \(response.statusCode))")
                    }
                }
            })
            SmallUploadBenchmarks.report(workload, times: times, uploadBytes: body.count, reference: "URLSession uploadTask", referenceName: "raw URLSession")
        }
    }

    /// URLSession's own upload of `body`, as an application without FormPost writes it.
    private static func upload(_ request: URLRequest, body: Data, on session: URLSession) async throws -> (Data, HTTPURLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            session.uploadTask(with: request, from: body) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: BenchmarkFailure("URLSession answered without an HTTP response"))
                }
            }.resume()
        }
    }
}
#endif
