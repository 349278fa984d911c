import Foundation
import Multipart
import Testing

/// `formpost -x` through a real forward proxy (`Tests/Interop/proxy.py`: CONNECT tunnels and
/// absolute-form requests, Basic credentials when asked), beside curl with the same arguments.
@Suite("Uploads through a proxy")
struct ProxyTests {
    /// A running proxy: its port and the request lines it logged.
    final class Proxy: Sendable {
        let port: Int
        private let log: String
        private let process: ChildProcess

        init(directory: SampleDirectory, credentials: String? = nil) throws {
            port = try freePort()
            log = directory.path + "/proxy-\(port).log"
            process = try ChildProcess("python3", [Subprocess.interopScript("proxy.py"), String(port), log] + (credentials.map { [$0] } ?? []),
                                       stdout: .discard, stderr: .discard)
            try RawSocket.waitForListenerBlocking(port: port, attempts: 200)
        }

        /// The request lines so far (`CONNECT host:port`, `POST http://…`, `407 CONNECT …`).
        var requests: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    @Test("a form goes through an HTTP proxy to an http:// and an https:// receiver, byte-exact, as curl's does")
    func throughProxy() async throws {
        let directory = try SampleDirectory()
        let file = try directory.file("photo.bin", size: 400_000, seed: 6)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))
        let fixtures = try await offPool { try TLSFixtures() }
        let proxy = try await offPool { try Proxy(directory: directory) }
        let plain = try TestServer()
        let answers = try await plain.run { base in
            try await withTLSReceiver(fixtures) { tlsPort in
                var answers: [(String, CommandResult)] = []
                for url in [base.absoluteString + "/upload", "https://localhost:\(tlsPort)/upload"] {
                    let arguments = ["-s", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", fixtures.caPath, "-F", "photo=@\(file)", url]
                    answers.append(("formpost \(url)", try await offPool { try formpost(arguments) }))
                    let curl = try await offPool { try ChildProcess("curl", arguments).finish() }
                    answers.append(("curl \(url)", CommandResult(status: curl.status, stdout: curl.stdout, stderr: String(decoding: curl.stderr, as: UTF8.self))))
                }
                return answers
            }
        }
        for (client, answer) in answers {
            #expect(answer.status == 0, "\(client): \(answer.stderr)")
            let receipt = try? JSONDecoder().decode(Receipt.self, from: answer.stdout)
            #expect(receipt?.files.map(\.sha256) == [expected], "\(client): \(answer.text.prefix(200))")
        }
        // curl forwards an http:// request in absolute form, AsyncHTTPClient tunnels every
        // URL; https goes through a CONNECT tunnel with both.
        let requests = proxy.requests
        #expect(requests.contains { $0.hasPrefix("POST http://127.0.0.1:") && $0.hasSuffix("/upload") }, "\(requests)")
        #expect(requests.contains { $0.hasPrefix("CONNECT 127.0.0.1:") }, "\(requests)")
        #expect(requests.filter { $0.hasPrefix("CONNECT localhost:") }.count >= 2, "\(requests)")
    }

    @Test("a proxy that asks for credentials gets them from -x user:password@; without them formpost exits as curl does")
    func proxyCredentials() async throws {
        let directory = try SampleDirectory()
        let fixtures = try await offPool { try TLSFixtures() }
        let proxy = try await offPool { try Proxy(directory: directory, credentials: "ann:s3cr%t") }
        let results = try await withTLSReceiver(fixtures) { tlsPort in
            let url = "https://localhost:\(tlsPort)/upload"
            var results: [String: (ours: Int32, curl: Int32)] = [:]
            for (name, proxyURL) in [("with", "http://ann:s3cr%25t@127.0.0.1:\(proxy.port)"), ("without", "http://127.0.0.1:\(proxy.port)")] {
                let arguments = ["-s", "-o", "/dev/null", "-x", proxyURL, "--cacert", fixtures.caPath, "-F", "a=1", url]
                let ours = try await offPool { try formpost(arguments) }
                let curl = try await offPool { try Subprocess.status("curl", arguments) }
                results[name] = (ours.status, curl)
            }
            return results
        }
        #expect(results["with"]?.ours == 0 && results["with"]?.curl == 0, "\(results)")
        #expect(results["without"]?.curl == 56, "\(results)")
        #expect(results["without"]?.ours == results["without"]?.curl, "formpost exited \(results["without"]?.ours ?? -1), curl \(results["without"]?.curl ?? -1)")
        #expect(proxy.requests.contains { $0.hasPrefix("407 CONNECT") })
    }
}
