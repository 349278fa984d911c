import Foundation
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

    /// Starts the proxy `script` (in Tests/Interop) on a free port in front of `store`, with
    /// `arguments` after the two ports; its standard error goes to `proxyErrors`.
    init(_ store: MotoStore, proxy script: String, _ arguments: [String] = [], proxyErrors: ChildProcess.Output = .capture) async throws {
        self.store = store
        proxyPort = try freePort()
        proxy = try ChildProcess("python3", [Subprocess.interopScript(script), String(proxyPort), String(store.port)] + arguments, stderr: proxyErrors)
        try await RawSocket.waitForListener(port: proxyPort)
        directory = try SampleDirectory()
    }

    /// The command line of `formpost serve` on `port`, storing under `prefix` through the
    /// proxy, then `options`.
    func serveCommand(port: Int, prefix: String, _ options: [String] = []) -> [String] {
        MotoStore.credentials + [formpostBinary, "serve", "--port", String(port), "--dir", directory.path + "/unused",
                                 "--store", "s3://\(store.bucket)/\(prefix)", "--s3-endpoint", "http://127.0.0.1:\(proxyPort)"] + options
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
