import AsyncHTTPClient
import Foundation
@testable import FormPost
import Multipart
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import Synchronization
import Testing

/// How the AsyncHTTPClient transport adapts to the event loop family it runs on. Apple's
/// Network.framework cannot run here; any event loop that NIOPosix's bootstrap refuses (here
/// NIOEmbedded's `NIOAsyncTestingEventLoop`) takes its place, since that refusal is what
/// AsyncHTTPClient itself decides by.
@Suite struct NetworkStackTests {
    @Test func familyIsReadFromTheGroupAsAsyncHTTPClientReadsIt() async throws {
        #expect(NetworkStack(MultiThreadedEventLoopGroup.singleton) == .sockets)
        #expect(NetworkStack(MultiThreadedEventLoopGroup.singleton.next()) == .sockets)
        let other = NIOAsyncTestingEventLoop()
        #expect(NetworkStack(other) == .networkFramework)
        try await other.shutdownGracefully()
    }

    /// FormPost's own client gives a connection that takes `FileRegion`s for plaintext HTTP on
    /// NIOPosix's sockets only: not for https, not on another stack.
    @Test func fileRegionsOnlyOnPlaintextSockets() async throws {
        let sockets = NetworkStack.makeClient(configuration: HTTPClient.Configuration(), group: MultiThreadedEventLoopGroup.singleton).client
        let other = NIOAsyncTestingEventLoop()
        let elsewhere = NetworkStack.makeClient(configuration: HTTPClient.Configuration(), group: other).client
        func origin(_ url: String) -> Origin { Origin(URL(string: url)!) }
        #expect(sockets.stack == .sockets && elsewhere.stack == .networkFramework)
        #expect(sockets.plaintextSocketConnection(to: origin("http://example.test/")) != nil)
        #expect(sockets.plaintextSocketConnection(to: origin("HTTP://example.test/")) != nil)
        #expect(sockets.plaintextSocketConnection(to: origin("https://example.test/")) == nil)
        #expect(elsewhere.plaintextSocketConnection(to: origin("http://example.test/")) == nil)
        #expect(elsewhere.plaintextSocketConnection(to: origin("https://example.test/")) == nil)
        try await sockets.client.shutdown()
        try await elsewhere.client.shutdown()
        try await other.shutdownGracefully()
    }

    /// The body writer without a plaintext socket connection writes the whole body as
    /// buffers — no `FileRegion`, which Network.framework's channel and NIOSSL's handler
    /// would stop the process on; given one, it sends the file unread. Same bytes either way.
    @Test(arguments: [false, true]) func bodyWriterFollowsTheConnection(plaintextSockets: Bool) async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 3 << 20)
        let plan = try form.plan()
        let own = NetworkStack.makeClient(configuration: HTTPClient.Configuration(), group: MultiThreadedEventLoopGroup.singleton).client
        defer { Task { try? await own.client.shutdown() } }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let connection = own.plaintextSocketConnection(to: Origin(URL(string: plaintextSockets ? "http://example.test/" : "https://example.test/")!))
        let body = FileRegionBody(plan: plan, eventLoop: loop, fileRegionsOn: connection)
        let written = Mutex<(bytes: [UInt8], regions: Int)>(([], 0))
        let writer = HTTPClient.Body.StreamWriter { part in
            written.withLock { written in
                switch part {
                case .byteBuffer(let buffer):
                    written.bytes += buffer.readableBytesView
                case .fileRegion(let region):
                    written.regions += 1
                    // What sendfile would send: the region's bytes, read here to compare.
                    let bytes = try? region.fileHandle.withUnsafeFileDescriptor { descriptor -> [UInt8] in
                        var bytes = [UInt8](repeating: 0, count: region.readableBytes)
                        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, region.readableBytes, off_t(region.readerIndex)) }
                        return Array(bytes.prefix(max(0, count)))
                    }
                    written.bytes += bytes ?? []
                }
            }
            // What AsyncHTTPClient's delegate reports once the connection wrote the part.
            loop.execute { body.partSent() }
            return loop.makeSucceededVoidFuture()
        }
        try await body.requestBody.stream(writer).get()
        try await body.finish(checkingFiles: true)
        let result = written.withLock { $0 }
        #expect(result.bytes == Array(try await plan.encodedData()))
        if plaintextSockets {
            #expect(result.regions > 0)
        } else {
            #expect(result.regions == 0)
        }
    }

    @Test func tlsThatOnlyNIOSSLCarriesPicksSockets() {
        #expect(NetworkStack.socketsOnlyFeature(of: nil) == nil)
        var plain = TLSConfiguration.makeClientConfiguration()
        plain.trustRoots = .default
        #expect(NetworkStack.socketsOnlyFeature(of: plain) == nil)
        var keyLog = TLSConfiguration.makeClientConfiguration()
        keyLog.keyLogCallback = { _ in }
        #expect(NetworkStack.socketsOnlyFeature(of: keyLog) != nil)
        var noHostName = TLSConfiguration.makeClientConfiguration()
        noHostName.certificateVerification = .noHostnameVerification
        #expect(NetworkStack.socketsOnlyFeature(of: noHostName) != nil)

        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = keyLog
        #expect(NetworkStack(NetworkStack.preferredGroup(for: configuration)) == .sockets)
        // Without such a feature FormPost takes AsyncHTTPClient's default for the platform
        // (on Linux NIOPosix's, on Apple platforms Network.framework's).
        #expect(NetworkStack.preferredGroup(for: HTTPClient.Configuration()) === HTTPClient.defaultEventLoopGroup)
    }

    @Test func clientCertificateOnANonPosixGroupIsRefusedNotACrash() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateChain = try NIOSSLCertificate.fromPEMFile(fixtures.clientCertificatePath).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: fixtures.clientKeyPath, format: .pem))
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        #expect(NetworkStack.socketsOnlyFeature(of: tls) == "a client certificate")
        #expect(NetworkStack(NetworkStack.preferredGroup(for: configuration)) == .sockets)

        let other = NIOAsyncTestingEventLoop()
        let transport = AsyncHTTPClientTransport(configuration: configuration, eventLoopGroup: other)
        let client = FormPostClient(transport: transport)
        await #expect {
            _ = try await client.upload(MultipartForm(), to: URL(string: "https://127.0.0.1:9/")!)
        } throws: { error in
            guard case UploadError.unsupportedConfiguration(let reason) = error else { return false }
            return reason.contains("client certificate") && reason.contains("MultiThreadedEventLoopGroup")
        }
        try await transport.shutdown()
        try await other.shutdownGracefully()
        // The same configuration with the group left to FormPost is accepted: the request
        // goes out, and meets a closed port.
        #expect(NetworkStack.unsupportedConfiguration(configuration, on: MultiThreadedEventLoopGroup.singleton) == nil)
        let chosen = AsyncHTTPClientTransport(configuration: configuration)
        let closedPort = try freePort()
        await #expect {
            _ = try await FormPostClient(transport: chosen).upload(MultipartForm(), to: URL(string: "https://127.0.0.1:\(closedPort)/")!)
        } throws: { error in
            guard case UploadError.cannotConnect = error else { return false }
            return true
        }
        try await chosen.shutdown()
    }

    /// Each kind of Network.framework failure becomes the UploadError NIOPosix's would.
    @Test func networkFrameworkFailuresMapLikeNIOPosixOnes() {
        func error(_ failure: NetworkFrameworkFailure) -> any Error { failure.error(host: "example.test", port: 8443) }
        for code in [ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENETUNREACH, ENETDOWN] {
            guard case UploadError.cannotConnect(let host, let port, _)? = error(.posix(code)) as? UploadError else {
                Issue.record("errno \(code) is not cannotConnect: \(error(.posix(code)))")
                continue
            }
            #expect(host == "example.test" && port == 8443)
        }
        #expect({ if case UploadError.timedOut? = error(.posix(ETIMEDOUT)) as? UploadError { true } else { false } }())
        #expect(error(.posix(ECANCELED)) is CancellationError)
        #expect({ if case UploadError.transport? = error(.posix(EPROTO)) as? UploadError { true } else { false } }())
        #expect({ if case UploadError.cannotResolve(host: "example.test", _)? = error(.dns(-65554)) as? UploadError { true } else { false } }())
        for status: Int32 in [-9807, -9808, -9812, -9813, -9814, -9815, -9843, -67843] {
            #expect({ if case UploadError.untrustedCertificate? = error(.tls(status)) as? UploadError { true } else { false } }(), "OSStatus \(status)")
        }
        for status: Int32 in [-9800, -9824, -9825, -9829] {
            #expect({ if case UploadError.tlsHandshakeFailed? = error(.tls(status)) as? UploadError { true } else { false } }(), "OSStatus \(status)")
        }
    }
}
