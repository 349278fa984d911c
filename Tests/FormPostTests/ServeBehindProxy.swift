import Foundation
import Multipart
import Testing

/// `formpost serve --store s3://BUCKET/PREFIX` on moto behind one of the proxies in
/// Tests/Interop, which stands in for a store that behaves otherwise, or fails on cue: the
/// proxy started at once, receivers on it as the test asks.
final class ServeBehindProxy: Sendable {
    let store: MotoStore
    let proxy: ChildProcess
    /// Where the proxy listens: the receivers' `--s3-endpoint`.
    let proxyPort: Int
    /// The test's files, and the receivers' unused `--dir`.
    let directory: SampleDirectory
    /// The certificates of a proxy taking TLS connections, nil for plain HTTP.
    let tls: TLSFixtures?

    /// Starts the proxy `script` (in Tests/Interop) on a free port in front of `store`, with
    /// `arguments` after the two ports; its standard error goes to `proxyErrors`. With
    /// `tls`, the proxy is given its certificate and key after them (a proxy that takes
    /// TLS connections so), and the receivers reach it over TLS, trusting its CA
    /// (`AWS_CA_BUNDLE`).
    init(_ store: MotoStore, proxy script: String, _ arguments: [String] = [], tls: TLSFixtures? = nil,
         proxyErrors: ChildProcess.Output = .capture) async throws {
        self.store = store
        self.tls = tls
        proxyPort = try freePort()
        let certificate = tls.map { [$0.certificatePath, $0.keyPath] } ?? []
        proxy = try ChildProcess("python3", [Subprocess.interopScript(script), String(proxyPort), String(store.port)] + arguments + certificate,
                                 stderr: proxyErrors)
        try await RawSocket.waitForListener(port: proxyPort)
        directory = try SampleDirectory()
    }

    /// The command line of `formpost serve` on `port`, storing under `prefix` through the
    /// proxy, then `options`.
    func serveCommand(port: Int, prefix: String, _ options: [String] = []) -> [String] {
        let trust = tls.map { ["AWS_CA_BUNDLE=" + $0.caPath] } ?? []
        return MotoStore.credentials + trust + [formpostBinary, "serve", "--port", String(port), "--dir", directory.path + "/unused",
                                                "--store", "s3://\(store.bucket)/\(prefix)",
                                                "--s3-endpoint", "\(tls == nil ? "http" : "https")://127.0.0.1:\(proxyPort)"] + options
    }

    /// Starts `formpost serve` storing under `prefix` through the proxy with `options`, and
    /// waits until it listens: the process and its port; nil, with an issue saying what it
    /// printed, when it did not start within a minute. Its standard error goes to `errors`:
    /// captured (a pipe read only once it ends) where it logs few requests.
    func startServe(prefix: String, _ options: [String] = [], errors: ChildProcess.Output = .capture) async throws -> (process: ChildProcess, port: Int)? {
        let port = try freePort()
        let serve = try ChildProcess("env", serveCommand(port: port, prefix: prefix, options), stdout: .discard, stderr: errors)
        guard try await serve.waitUntilListening(port: port, seconds: 60) else {
            let finished = try await offPool { try serve.finish(timeout: 5) }
            Issue.record("formpost serve did not start (\(finished.status)): \(String(decoding: finished.stderr, as: UTF8.self))")
            return nil
        }
        return (serve, port)
    }

    /// Sends `form` as a form's file with curl, `tus` as a tus upload of 4 MiB appends with
    /// `formpost`, and `parallel` (when given) as a tus upload in two partial uploads joined
    /// by a final one (`formpost --parallel 2`), to the receiver on `port`; then expects the
    /// store to hold each whole, the form's file under the key its receipt names.
    func sendFormAndTus(port: Int, form: Data, tus: Data, parallel: Data? = nil) async throws {
        let formPath = directory.path + "/form.bin", tusPath = directory.path + "/tus.bin", parallelPath = directory.path + "/parallel.bin"
        try form.write(to: URL(fileURLWithPath: formPath))
        try tus.write(to: URL(fileURLWithPath: tusPath))
        let answer = try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(formPath)", "http://127.0.0.1:\(port)/"]) }
        let file = try #require(try? JSONDecoder().decode(Receipt.self, from: Data(answer.utf8)).files.first, "\(answer)")
        var uploads = [["--chunk-size", "4M", "-T", tusPath]]
        if let parallel {
            try parallel.write(to: URL(fileURLWithPath: parallelPath))
            uploads.append(["--parallel", "2", "-T", parallelPath])
        }
        for arguments in uploads {
            let upload = try await offPool {
                try ChildProcess(formpostBinary, ["-sS", "--retry", "0", "--resumable", "tus"] + arguments + ["http://127.0.0.1:\(port)/files"]).finish(timeout: 120)
            }
            #expect(upload.status == 0, "\(arguments): \(String(decoding: upload.stderr, as: UTF8.self))")
        }

        let contents = try await store.contents()
        let stored = Dictionary(contents.objects.filter { !$0.key.contains(".tus/") }.map { ($0.sha256, $0) }) { first, _ in first }
        #expect(stored[sha256Hex(form)]?.key == file.storedAs, "\(contents.objects.map(\.key))")
        for sent in [tus] + (parallel.map { [$0] } ?? []) {
            #expect(stored[sha256Hex(sent)]?.size == sent.count, "\(contents.objects.map(\.key))")
        }
    }

    /// What the receiver `serve` printed on its standard error, once stopped.
    static func stop(_ serve: ChildProcess) async throws -> String {
        let finished = try await offPool {
            serve.stop()
            return try serve.finish(timeout: 10)
        }
        return String(decoding: finished.stderr, as: UTF8.self)
    }

    /// The lines the proxy printed, once stopped.
    func proxyLines() async throws -> [Substring] {
        let proxy = proxy
        return try await offPool {
            proxy.stop()
            return String(decoding: try proxy.finish().stdout, as: UTF8.self).split(separator: "\n")
        }
    }

    deinit {
        proxy.stop()
    }
}
