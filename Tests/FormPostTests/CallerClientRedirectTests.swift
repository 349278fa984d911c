import AsyncHTTPClient
import Foundation
import FormPost
import Multipart
import NIOSSL
import Testing

/// An `HTTPClient` the application made, with AsyncHTTPClient's defaults — redirects
/// followed, by AsyncHTTPClient itself, which sends the same body again on a connection to
/// the new location — given to ``AsyncHTTPClientTransport/init(client:connectionsPerHost:)``.
/// A plaintext URL that answers 308 to an https one puts that body on a TLS connection,
/// where a `FileRegion` write stops the process (NIOSSL takes `ByteBuffer`s only).
@Suite("A caller's HTTPClient that follows redirects")
struct CallerClientRedirectTests {
    struct Case: Sendable, CustomTestStringConvertible {
        /// Whether the plaintext server reads the whole body before its 308 (the first
        /// request then sends all of it), or answers at once.
        let readsFirst: Bool
        let httpVersion: HTTPClient.Configuration.HTTPVersion
        var testDescription: String { "\(readsFirst ? "308 after the body" : "308 at once"), \(httpVersion == .http1Only ? "HTTP/1.1" : "HTTP/2 by ALPN") over TLS" }
    }

    @Test("a 3 MiB file part posted to http, answered 308 to https, arrives byte-exact over TLS — no FileRegion reaches TLS",
          arguments: [Case(readsFirst: false, httpVersion: .automatic), Case(readsFirst: true, httpVersion: .http1Only)])
    func redirectFromPlaintextToTLS(_ redirect: Case) async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let directory = try SampleDirectory()
        let path = try directory.file("big.bin", size: 3 << 20, seed: 21)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        let form = try {
            var form = MultipartForm()
            form.append(name: "title", value: "moved")
            try form.append(name: "big", fileAt: path)
            return form
        }()

        // AsyncHTTPClient's defaults (redirects followed, up to 5), trusting the test CA.
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(fixtures.caPath)
        configuration.tlsConfiguration = tls
        configuration.httpVersion = redirect.httpVersion
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let transport = AsyncHTTPClientTransport(client: client)

        let answer: (status: Int, receipt: Receipt)
        do {
            answer = try await withTLSReceiver(fixtures) { tlsPort in
                try await TestServer().run { base in
                    let target = "https://localhost:\(tlsPort)/upload"
                    let query = "to=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target) + (redirect.readsFirst ? "&read=1" : "")
                    let url = URL(string: "\(base.absoluteString)/redirect/308?\(query)")!
                    // Streaming, so the file stays a file region of the plan (a form under the
                    // default strategy's 10 MB is encoded in memory first: no file to send unread).
                    let response = try await FormPostClient(transport: transport).upload(form, to: url, strategy: .streaming)
                    return (response.status, try response.decode(Receipt.self))
                }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        let (status, receipt) = answer
        #expect(status == 200)
        #expect(receipt.fields == [.init(name: "title", value: "moved")])
        #expect(receipt.files.map(\.name) == ["big"])
        #expect(receipt.files.map(\.size) == [3 << 20])
        #expect(receipt.files.map(\.sha256) == [expected])
    }
}
