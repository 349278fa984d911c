import AsyncHTTPClient
import Foundation
@testable import FormPost
import Multipart
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import Testing

/// Trust roots that AsyncHTTPClient's Network.framework TLS would drop or fail on go to
/// NIOSSL on NIOPosix's sockets, as a client certificate does: `additionalTrustRoots` (its
/// bridge, `NIOTransportServices/TLSConfiguration.swift`, reads `trustRoots` alone) and
/// `trustRoots = .file(<a directory>)` (read there as one PEM file). Network.framework cannot
/// run here; a loop NIOPosix's bootstrap refuses stands for it, as in `NetworkStackTests`.
@Suite("Trust roots only NIOSSL reads")
struct TrustRootsRoutingTests {
    @Test("additional trust roots and a directory of roots pick NIOPosix; one PEM file, certificates and the default do not")
    func decision() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        var additional = TLSConfiguration.makeClientConfiguration()
        additional.additionalTrustRoots = [.file(fixtures.caPath)]
        var directory = TLSConfiguration.makeClientConfiguration()
        directory.trustRoots = .file(fixtures.directory)
        #expect(NetworkStack.socketsOnlyFeature(of: additional) == "additional trust roots (additionalTrustRoots)")
        #expect(NetworkStack.socketsOnlyFeature(of: directory) == "a directory of trust roots (\(fixtures.directory))")
        for tls in [additional, directory] {
            var configuration = HTTPClient.Configuration()
            configuration.tlsConfiguration = tls
            #expect(NetworkStack(NetworkStack.preferredGroup(for: configuration)) == .sockets)
        }

        var file = TLSConfiguration.makeClientConfiguration()
        file.trustRoots = .file(fixtures.caPath)
        var certificates = TLSConfiguration.makeClientConfiguration()
        certificates.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(fixtures.caPath))
        for tls in [file, certificates, TLSConfiguration.makeClientConfiguration()] {
            #expect(NetworkStack.socketsOnlyFeature(of: tls) == nil)
            var configuration = HTTPClient.Configuration()
            configuration.tlsConfiguration = tls
            // AsyncHTTPClient's default for the platform (NIOPosix here, Network.framework on Apple platforms).
            #expect(NetworkStack.preferredGroup(for: configuration) === HTTPClient.defaultEventLoopGroup)
        }
    }

    @Test("given a Network.framework group with additional trust roots, the transport refuses with an error that says why, instead of dropping them")
    func refusedOnAnotherStack() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(fixtures.caPath)]
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        let other = NIOAsyncTestingEventLoop()
        let transport = AsyncHTTPClientTransport(configuration: configuration, eventLoopGroup: other)
        await #expect {
            _ = try await FormPostClient(transport: transport).upload(MultipartForm(), to: URL(string: "https://127.0.0.1:9/")!)
        } throws: { error in
            guard case UploadError.unsupportedConfiguration(let reason) = error else { return false }
            return reason.contains("additionalTrustRoots") && reason.contains("MultiThreadedEventLoopGroup")
        }
        try await transport.shutdown()
        try await other.shutdownGracefully()
    }

    @Test("with the group left to FormPost, a server whose CA is only in additionalTrustRoots is trusted, and the upload arrives")
    func additionalRootsTrusted() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(fixtures.caPath)]
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.httpVersion = .http1Only
        configuration.timeout.connect = HTTPClient.Configuration.testConnectTimeout
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let receipt: Receipt
        do {
            receipt = try await withTLSReceiver(fixtures) { port in
                var form = MultipartForm()
                form.append(name: "title", value: "trusted")
                return try await FormPostClient(transport: transport).upload(form, to: URL(string: "https://localhost:\(port)/upload")!).decode(Receipt.self)
            }
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
        #expect(receipt.fields == [.init(name: "title", value: "trusted")])
    }
}
