#if os(Linux)
import AsyncHTTPClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FormPost
import FormPostServer
import Multipart
import NIOCore
import NIOSSL
import Synchronization
import Testing

/// Uploads over real TLS: nginx from Debian terminates it with certificates openssl made
/// for the test, in front of the test server's receiver on 127.0.0.1. Linux only: macOS
/// runners have no nginx, and Darwin neither `fdatasync` nor `posix_fadvise`, nor the
/// `/proc` that ``formpostPeakRSS(_:)`` reads.
@Suite("HTTPS through nginx")
struct HTTPSTests {
    /// A TLS front on the test server, with its certificates, for one test.
    struct Front {
        let fixtures: TLSFixtures
        let nginx: NginxFront
        let base: URL

        /// `https://localhost:PORT/PATH` on the port serving `certificate`.
        func url(_ path: String, port: Int? = nil) -> String {
            "https://localhost:\(port ?? nginx.port)/\(path)"
        }
    }

    /// Runs `body` with a TLS front on a fresh test server.
    /// (openssl and nginx are waited for on a Dispatch thread: never block the cooperative
    /// pool, which every in-process server of the suite shares.)
    private func withFront<T: Sendable>(keepaliveRequests: Int? = nil, _ body: @Sendable (Front) async throws -> T) async throws -> T {
        let fixtures = try await offPool { try TLSFixtures() }
        let server = try TestServer()
        return try await server.run { base in
            let nginx = try await offPool { try NginxFront(fixtures: fixtures, upstreamPort: base.port ?? 0, keepaliveRequests: keepaliveRequests) }
            do {
                let result = try await body(Front(fixtures: fixtures, nginx: nginx, base: base))
                try await offPool { nginx.stop() }
                return result
            } catch {
                try await offPool { nginx.stop() }
                throw error
            }
        }
    }

    @Test("formpost --cacert uploads byte-exact over HTTP/2 and HTTP/1.1, on the protocol asked, as curl does",
          arguments: [("--http2", "HTTP/2.0"), ("--http1.1", "HTTP/1.1")])
    func commandUploads(flag: String, expectedProtocol: String) async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("photo.bin", size: 3_000_000, seed: 9)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        let (ours, curl, protocols, ourHead, curlHead) = try await withFront { front in
            let arguments = ["-s", "--cacert", front.fixtures.caPath, flag, "-F", "title=hi", "-F", "photo=@\(path)", front.url("upload")]
            let ours = try await offPool { try formpost(arguments) }
            let curl = try await offPool { try Subprocess.runForBytes("curl", arguments) }
            // The status line of -i and -w's %{http_version}, as curl writes them.
            let heads = ["-s", "--cacert", front.fixtures.caPath, flag, "-i", "-w", "\n%{http_version}", "-F", "a=1", front.url("digest")]
            let ourHead = try await offPool { try formpost(heads) }
            let curlHead = try await offPool { try Subprocess.run("curl", heads) }
            return (ours, curl, try await front.nginx.protocolsLogged(atLeast: 4), ourHead.text, curlHead)
        }
        let statusAndVersion = { (text: String) -> [String] in
            [text.components(separatedBy: "\r\n").first ?? "", text.components(separatedBy: "\n").last ?? ""]
        }
        #expect(statusAndVersion(ourHead) == statusAndVersion(curlHead), "formpost: \(ourHead)\ncurl: \(curlHead)")
        #expect(statusAndVersion(curlHead)[1] == (flag == "--http2" ? "2" : "1.1"))
        #expect(ours.status == 0, "\(ours.stderr)")
        for answer in [ours.stdout, curl] {
            let receipt = try JSONDecoder().decode(Receipt.self, from: answer)
            #expect(receipt.fields == [.init(name: "title", value: "hi")])
            #expect(receipt.files.map(\.sha256) == [expected])
            #expect(receipt.files.map(\.size) == [3_000_000])
        }
        #expect(protocols == Array(repeating: expectedProtocol, count: 4), "nginx logged \(protocols)")
    }

    /// A TLS case: which certificate the server presents, what the client adds, and what
    /// curl and formpost must both end with.
    struct TrustCase: Sendable, CustomTestStringConvertible {
        enum Certificate: Sendable { case valid, expired, wrongHost, untrusted }
        let name: String
        let certificate: Certificate
        let options: @Sendable (TLSFixtures) -> [String]
        let exitCode: Int32
        let message: String?
        var testDescription: String { name }
    }

    static let trustCases: [TrustCase] = [
        TrustCase(name: "a CA the system does not trust", certificate: .valid, options: { _ in [] }, exitCode: 60, message: "was not accepted"),
        TrustCase(name: "the same, trusted with --cacert", certificate: .valid, options: { ["--cacert", $0.caPath] }, exitCode: 0, message: nil),
        TrustCase(name: "an expired certificate", certificate: .expired, options: { ["--cacert", $0.caPath] }, exitCode: 60, message: "was not accepted"),
        TrustCase(name: "a certificate for another host", certificate: .wrongHost, options: { ["--cacert", $0.caPath] }, exitCode: 60,
                  message: "it is not issued for the host name localhost"),
        TrustCase(name: "a certificate from an untrusted CA", certificate: .untrusted, options: { ["--cacert", $0.caPath] }, exitCode: 60, message: "was not accepted"),
        TrustCase(name: "the same with -k", certificate: .untrusted, options: { _ in ["-k"] }, exitCode: 0, message: nil),
        TrustCase(name: "an expired certificate with -k", certificate: .expired, options: { _ in ["-k"] }, exitCode: 0, message: nil),
    ]

    @Test("certificates are checked as curl checks them, with its exit codes and a sentence naming the cause", arguments: trustCases)
    func trust(_ trustCase: TrustCase) async throws {
        let (ours, curlStatus) = try await withFront { front in
            let port: Int
            switch trustCase.certificate {
            case .valid: port = front.nginx.port
            case .expired: port = front.nginx.expiredPort
            case .wrongHost: port = front.nginx.wrongHostPort
            case .untrusted: port = front.nginx.untrustedPort
            }
            let arguments = ["-sS", "--max-time", "60"] + trustCase.options(front.fixtures) + ["-F", "a=1", front.url("digest", port: port)]
            let ours = try await offPool { try formpost(arguments) }
            let curl = try await offPool { try Subprocess.status("curl", arguments) }
            return (ours, curl)
        }
        #expect(curlStatus == trustCase.exitCode, "curl exited \(curlStatus)")
        #expect(ours.status == trustCase.exitCode, "\(ours.stderr)")
        if let message = trustCase.message {
            #expect(ours.stderr.contains(message), "\(ours.stderr)")
            #expect(ours.stderr.contains("--cacert"), "the message says how to trust a CA: \(ours.stderr)")
        }
    }

    @Test("--cert and --key present a client certificate; without one the server refuses, as with curl")
    func clientCertificate() async throws {
        let (withCertificate, curlWith, without, curlWithout) = try await withFront { front in
            let url = front.url("digest", port: front.nginx.clientCertificatePort)
            let common = ["-s", "--cacert", front.fixtures.caPath, "-F", "a=1", "-w", "%{http_code}", "-o", "/dev/null"]
            let certificate = ["--cert", front.fixtures.clientCertificatePath, "--key", front.fixtures.clientKeyPath]
            return (try await offPool { try formpost(common + certificate + [url]) },
                    try await offPool { try Subprocess.run("curl", common + certificate + [url]) },
                    try await offPool { try formpost(common + [url]) },
                    try await offPool { try Subprocess.run("curl", common + [url]) })
        }
        #expect(withCertificate.status == 0 && withCertificate.text == "200", "\(withCertificate.text) \(withCertificate.stderr)")
        #expect(curlWith == "200")
        #expect(without.text == "400" && curlWithout == "400", "nginx answers 400 to a client without a certificate: \(without.text), curl \(curlWithout)")
    }

    @Test("the URLSession transport refuses a certificate the system does not trust, with exit code 60")
    func urlSessionTrust() async throws {
        let result = try await withFront { front in
            try await offPool { try formpost(["-s", "--transport", "urlsession", "-F", "a=1", front.url("digest")]) }
        }
        #expect(result.status == 60, "\(result.stderr)")
    }

    @Test("the library uploads over HTTPS with a configuration of its own, or with the application's HTTPClient")
    func libraryConfiguration() async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 2_000_000)
        let expected = try await form.plan().encodedData()
        try await withFront { front in
            var configuration = HTTPClient.Configuration(trusting: front.fixtures.caPath)
            for version in [HTTPClient.Configuration.HTTPVersion.automatic, .http1Only] {
                configuration.httpVersion = version
                let response = try await withTransport(configuration) { transport in
                    try await FormPostClient(transport: transport).upload(form, to: URL(string: front.url("digest"))!)
                }
                let digest = try JSONDecoder().decode(Digest.self, from: Data(response.body))
                #expect(digest.sha256 == sha256Hex(expected) && digest.length == expected.count)
            }
            configuration.redirectConfiguration = .disallow
            let appClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let (response, again): (UploadResponse, UploadResponse)
            do {
                let transport = AsyncHTTPClientTransport(client: appClient)
                response = try await FormPostClient(transport: transport).upload(form, to: URL(string: front.url("digest"))!)
                try await transport.shutdown()
                // The transport did not shut the application's client down: it still works.
                again = try await FormPostClient(transport: transport).upload(form, to: URL(string: front.url("digest"))!)
                try await appClient.shutdown()
            } catch {
                try? await appClient.shutdown()
                throw error
            }
            for answer in [response, again] {
                #expect(try JSONDecoder().decode(Digest.self, from: Data(answer.body)).sha256 == sha256Hex(expected))
            }
            #expect(try await front.nginx.protocolsLogged(atLeast: 4) == ["HTTP/2.0", "HTTP/1.1", "HTTP/1.1", "HTTP/1.1"])
        }
    }

    @Test("over TLS, stream parts, bytes and files the page cache does not hold all arrive byte-exact", arguments: [false, true])
    func everyKindOfPart(chunked: Bool) async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("cold.bin", size: 6_000_000, seed: 5)
        var form = MultipartForm()
        form.append(name: "title", value: "Holiday")
        form.append(name: "blob", bytes: Array(repeating: 7, count: 300_000), filename: "blob.bin")
        try form.append(name: "cold", fileAt: path)
        let chunks: [[UInt8]] = (0..<12).map { [UInt8](repeating: UInt8($0), count: 90_000) }
        form.append(name: "stream", length: chunked ? nil : 1_080_000, filename: "s.bin") {
            AsyncStream<[UInt8]> { continuation in
                for chunk in chunks { continuation.yield(chunk) }
                continuation.finish()
            }
        }
        let expected = try await form.plan().encodedData()
        let sending = form
        // Out of the page cache, so that reading it must wait for the disk: the event loop
        // leaves those reads to NIO's thread pool.
        let descriptor = open(path, O_RDONLY)
        #expect(fdatasync(descriptor) == 0)
        #expect(posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED) == 0)
        close(descriptor)
        let (digest, protocols) = try await withFront { front in
            let configuration = HTTPClient.Configuration(trusting: front.fixtures.caPath)
            let response = try await withTransport(configuration) { transport in
                try await FormPostClient(transport: transport).upload(sending, to: URL(string: front.url("digest"))!, strategy: .streaming)
            }
            return (try JSONDecoder().decode(Digest.self, from: Data(response.body)), try await front.nginx.protocolsLogged(atLeast: 1))
        }
        #expect(digest.length == expected.count)
        #expect(digest.sha256 == sha256Hex(expected))
        #expect(protocols == ["HTTP/2.0"])
    }

    @Test("a 12 MB file part through nginx's streaming configuration arrives byte-exact over HTTP/2, and over HTTP/1.1 where the server offers no h2, twice each",
          arguments: [true, false])
    func largeUploadThroughNginx(http2: Bool) async throws {
        let directory = try SampleDirectory()
        var form = MultipartForm()
        form.append(name: "title", value: "large")
        try form.append(name: "file", fileAt: try directory.file("large.bin", size: 12_000_000, seed: 6))
        let expected = try await form.plan().encodedData()
        let sending = form
        let sent = Mutex<Int64>(0)
        let (responses, protocols) = try await withFront { front in
            let configuration = HTTPClient.Configuration(trusting: front.fixtures.caPath)
            let url = URL(string: front.url("digest", port: http2 ? nil : front.nginx.http1Port))!
            let responses = try await withTransport(configuration) { transport in
                let client = FormPostClient(transport: transport)
                var responses: [UploadResponse] = []
                for _ in 0..<2 {
                    responses.append(try await client.upload(sending, to: url) { progress in sent.withLock { $0 = max($0, progress.bytesSent) } })
                }
                return responses
            }
            return (responses, try await front.nginx.protocolsLogged(atLeast: 2))
        }
        for response in responses {
            #expect(response.httpVersion == (http2 ? "2" : "1.1"))
            let digest = try JSONDecoder().decode(Digest.self, from: Data(response.body))
            #expect(digest.length == expected.count && digest.sha256 == sha256Hex(expected))
        }
        #expect(sent.withLock { $0 } == Int64(expected.count))
        #expect(protocols == Array(repeating: http2 ? "HTTP/2.0" : "HTTP/1.1", count: 2), "nginx logged \(protocols)")
    }

    @Test("uploads over HTTP/2 to a server that ends its connection (GOAWAY) every 5 requests, 8 at once: every one arrives whole — a stream the server never took is sent again on a new connection")
    func goawayEveryFewStreams() async throws {
        let uploads = 60
        let (arrived, protocols) = try await withFront(keepaliveRequests: 5) { front in
            let configuration = HTTPClient.Configuration(trusting: front.fixtures.caPath)
            let arrived = try await withTransport(configuration) { transport in
                let client = FormPostClient(transport: transport)
                return try await withThrowingTaskGroup(of: Bool.self) { group in
                    var arrived = 0
                    for index in 0..<uploads {
                        if index >= 8, try await group.next() == true { arrived += 1 }
                        group.addTask {
                            var form = MultipartForm()
                            form.append(name: "file", bytes: [UInt8](repeating: UInt8(index), count: 3000), filename: "u\(index).bin")
                            let expected = sha256Hex(try await form.plan().encodedBytes())
                            let response = try await client.upload(form, to: URL(string: front.url("digest"))!)
                            guard response.status == 200 else {
                                Issue.record("upload \(index): \(response.status) \(response.text)")
                                return false
                            }
                            return try JSONDecoder().decode(Digest.self, from: Data(response.body)).sha256 == expected
                        }
                    }
                    for try await whole in group where whole { arrived += 1 }
                    return arrived
                }
            }
            return (arrived, try await front.nginx.protocolsLogged(atLeast: uploads))
        }
        #expect(arrived == uploads)
        #expect(Set(protocols) == ["HTTP/2.0"], "\(Set(protocols))")
    }

    @Test("over TLS the client's memory stays bounded against a slow reader, on HTTP/1.1 and HTTP/2", arguments: ["--http1.1", "--http2"])
    func boundedMemory(flag: String) async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("large.bin", size: 120_000_000)
        let (status, peakMiB, detail) = try await withFront { front in
            try await offPool { try formpostPeakRSS(["-s", "-o", "/dev/null", "--cacert", front.fixtures.caPath, flag, "-F", "big=@\(path)", front.url("slow")]) }
        }
        #expect(status == 0)
        print("bounded-memory over TLS \(flag): client peak \(peakMiB) MiB (\(detail))")
        #expect(peakMiB > 0 && peakMiB < 64, "the client peaked at \(peakMiB) MiB (\(detail)) while sending 120 MB over TLS to a slow reader")
    }
}

extension HTTPClient.Configuration {
    /// AsyncHTTPClient's defaults, trusting only the CA certificate at `caPath`.
    init(trusting caPath: String) {
        self.init()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caPath)
        tlsConfiguration = tls
        timeout.connect = Self.testConnectTimeout
    }

    /// The connect timeout (TLS handshake included) of the tests' clients: a connection
    /// to an in-process server whose event loops ~400 concurrent tests share, on a disk other
    /// tests keep busy, took over AsyncHTTPClient's 10 s now and then (seen in full runs),
    /// while no test is about how fast a connection is made.
    static let testConnectTimeout: TimeAmount = .seconds(60)
}

/// Runs `body` with a transport of its own on `configuration`, shut down afterwards whether
/// `body` returns or throws (an AsyncHTTPClient left running traps in debug builds).
func withTransport<T: Sendable>(_ configuration: HTTPClient.Configuration,
                                _ body: (AsyncHTTPClientTransport) async throws -> T) async throws -> T {
    let transport = AsyncHTTPClientTransport(configuration: configuration)
    do {
        let result = try await body(transport)
        try await transport.shutdown()
        return result
    } catch {
        try? await transport.shutdown()
        throw error
    }
}
#endif
