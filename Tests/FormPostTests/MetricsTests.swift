import Foundation
import Hummingbird
import Testing

/// `formpost serve --metrics`: after a known sequence of uploads, `GET /metrics` parsed by
/// prometheus_client's own parser (Tests/Interop/parse_metrics.py) counts exactly what was
/// sent; without `--metrics` there is no such endpoint.
@Suite("Metrics")
struct MetricsTests {
    /// `formpost serve` in `directory` on a free port with `arguments`; stopped by the caller.
    func serve(in directory: SampleDirectory, _ arguments: [String]) async throws -> (ChildProcess, Int) {
        let port = try freePort()
        let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", directory.path + "/store"] + arguments,
                                      stdout: .discard, stderr: .discard)
        try await RawSocket.waitForListener(port: port, attempts: 1200)
        return (server, port)
    }

    /// curl's `-w '%{http_code}'` for `arguments` against 127.0.0.1:`port` + `path`.
    func curlStatus(_ port: Int, _ path: String, _ arguments: [String]) async throws -> String {
        try await offPool { try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}"] + arguments + ["http://127.0.0.1:\(port)\(path)"]) }
    }

    @Test("the counters equal what was sent: multipart forms completed and failed, tus and IETF-draft uploads created and completed, bytes received, requests by status")
    func countersMatchTheUploads() async throws {
        let directory = try SampleDirectory()
        let (server, port) = try await serve(in: directory, ["--metrics"])
        defer { server.stop() }
        // Two forms of known bytes, sent as they are.
        var formBytes = 0
        for (index, size) in [1_000, 300_000].enumerated() {
            let body = "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\(index).bin\"\r\n\r\n" + String(repeating: "x", count: size) + "\r\n--B--\r\n"
            let path = directory.path + "/form\(index).txt"
            try Data(body.utf8).write(to: URL(fileURLWithPath: path))
            formBytes += body.utf8.count
            let status = try await curlStatus(port, "/", ["-H", "Content-Type: multipart/form-data; boundary=B", "--data-binary", "@\(path)"])
            #expect(status == "200")
        }
        #expect(try await curlStatus(port, "/", ["-X", "POST", "-H", "Content-Type: text/plain"]) == "415")
        let tusFile = try directory.file("tus.bin", size: 700_000)
        let draftFile = try directory.file("draft.bin", size: 500_000, seed: 7)
        _ = try await offPool { try Subprocess.run(formpostBinary, ["-s", "-o", "/dev/null", "--resumable", "tus", "-T", tusFile, "http://127.0.0.1:\(port)/files"]) }
        _ = try await offPool { try Subprocess.run(formpostBinary, ["-s", "-o", "/dev/null", "--resumable", "ietf", "-T", draftFile, "http://127.0.0.1:\(port)/draft"]) }

        // Two tus uploads left unfinished: created, never appended to.
        for _ in 0..<2 {
            #expect(try await curlStatus(port, "/files", ["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 10"]) == "201")
        }
        let samples = try await scrape(port)
        #expect(samples["formpost_uploads_in_progress{protocol=tus}"] == 2, "\(samples)")
        #expect(samples["formpost_uploads_in_progress{protocol=ietf}"] == 0 && samples["formpost_uploads_in_progress{protocol=multipart}"] == 0)
        func uploads(_ kind: String, _ outcome: String) -> Double? { samples["formpost_uploads_total{outcome=\(outcome),protocol=\(kind)}"] }
        #expect(uploads("multipart", "completed") == 2, "\(samples)")
        #expect(uploads("multipart", "failed") == 1)
        #expect(uploads("tus", "created") == 3 && uploads("tus", "completed") == 1)
        #expect(uploads("ietf", "created") == 1 && uploads("ietf", "completed") == 1)
        #expect(samples["formpost_requests_total{method=POST,status=415}"] == 1)
        #expect((samples["formpost_requests_total{method=POST,status=200}"] ?? 0) >= 2)
        #expect(samples["formpost_received_bytes_total{}"] == Double(formBytes + 700_000 + 500_000), "\(samples)")
        let posts = samples.filter { $0.key.hasPrefix("formpost_requests_total{method=POST,") }.values.reduce(0, +)
        #expect(posts >= 4 && samples["formpost_request_duration_seconds_count{method=POST}"] == posts, "\(samples)")
        #expect((samples["formpost_open_connections{}"] ?? 0) >= 1)
        try await offPool { server.stop() }
    }

    @Test("requests are labelled by method from a fixed set: methods of other names (PROPFIND, MKCOL, LOCK) count as other, none makes a series of its own")
    func methodsFromAFixedSet() async throws {
        let directory = try SampleDirectory()
        let (server, port) = try await serve(in: directory, ["--metrics"])
        defer { server.stop() }
        for method in ["PROPFIND", "MKCOL", "LOCK"] {
            #expect(try await curlStatus(port, "/upload", ["-X", method]) == "405")
        }
        #expect(try await curlStatus(port, "/upload", ["-X", "DELETE"]) == "405")
        let samples = try await scrape(port)
        #expect(samples["formpost_requests_total{method=other,status=405}"] == 3, "\(samples)")
        #expect(samples["formpost_request_duration_seconds_count{method=other}"] == 3, "\(samples)")
        #expect(samples["formpost_requests_total{method=DELETE,status=405}"] == 1, "\(samples)")
        let methods = Set(samples.keys.filter { $0.hasPrefix("formpost_request") }.compactMap { key in
            key.split(separator: "{").last?.split(separator: ",").first { $0.hasPrefix("method=") }.map { String($0.dropFirst("method=".count)) }
        }.map { $0.hasSuffix("}") ? String($0.dropLast()) : $0 })
        #expect(methods.isSubset(of: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"]), "\(methods)")
        try await offPool { server.stop() }
    }

    /// `GET /metrics` of the server on `port`, parsed by prometheus_client: each sample's
    /// name and labels (`name{label=value,…}`, sorted) and its value.
    func scrape(_ port: Int) async throws -> [String: Double] {
        let text = try await offPool { try Subprocess.runForBytes("curl", ["-sS", "http://127.0.0.1:\(port)/metrics"]) }
        let parsed = try await offPool { try Subprocess.runForBytes("python3", [Subprocess.interopScript("parse_metrics.py")], input: text) }
        return try JSONDecoder().decode([String: Double].self, from: parsed)
    }

    @Test("hook calls are counted by event and outcome: pre-create allowed and denied, post-finish delivered; a hook nobody answers, pre-create failed",
          .timeLimit(.minutes(3)))
    func hookCallsCounted() async throws {
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { request, _ -> Response in
            let data = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            let refused = String(decoding: data, as: UTF8.self).contains("Bearer bad")
            return refused ? Response(status: .forbidden) : Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"allow": true}"#)))
        }
        try await whileRunning({ onStarted in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onStarted($0.localAddress?.port ?? 0) })
        }) { hookPort in
            let directory = try SampleDirectory()
            let (server, port) = try await serve(in: directory, ["--metrics", "--hook-url", "http://127.0.0.1:\(hookPort)/hook", "--hook-timeout", "60",
                                                                 "--hook-events", "pre-create,post-finish"])
            defer { server.stop() }
            // A directory of its own: one server keeps resumable uploads in a directory at a time.
            let (down, downPort) = try await serve(in: try SampleDirectory(), ["--metrics", "--hook-url", "http://127.0.0.1:\(try freePort())/hook", "--hook-timeout", "1"])
            defer { down.stop() }
            let file = try directory.file("f.bin", size: 1_000)
            #expect(try await curlStatus(port, "/upload", ["-F", "f=@" + file]) == "200")
            #expect(try await curlStatus(port, "/upload", ["-H", "Authorization: Bearer bad", "-F", "f=@" + file]) == "403")
            #expect(try await curlStatus(downPort, "/upload", ["-F", "f=@" + file]) == "503")
            var samples = try await scrape(port)
            for _ in 0..<600 where samples["formpost_hook_calls_total{event=post-finish,outcome=delivered}"] == nil {
                try await Task.sleep(for: .milliseconds(100))
                samples = try await scrape(port)
            }
            #expect(samples["formpost_hook_calls_total{event=pre-create,outcome=allowed}"] == 1, "\(samples)")
            #expect(samples["formpost_hook_calls_total{event=pre-create,outcome=denied}"] == 1)
            #expect(samples["formpost_hook_calls_total{event=post-finish,outcome=delivered}"] == 1)
            let downSamples = try await scrape(downPort)
            #expect(downSamples["formpost_hook_calls_total{event=pre-create,outcome=failed}"] == 1, "\(downSamples)")
            try await offPool {
                server.stop()
                down.stop()
            }
        }
    }

    @Test("without --metrics, GET /metrics is no endpoint (405, as any GET but the page's)")
    func offByDefault() async throws {
        let directory = try SampleDirectory()
        let (server, port) = try await serve(in: directory, [])
        defer { server.stop() }
        #expect(try await curlStatus(port, "/metrics", []) == "405")
        try await offPool { server.stop() }
    }
}
