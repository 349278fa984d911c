import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOPosix
import NIOSSL

/// The networking stack an AsyncHTTPClient connection runs on, decided as AsyncHTTPClient
/// decides it: an event loop that NIOPosix's `ClientBootstrap(validatingGroup:)` accepts
/// (a `MultiThreadedEventLoopGroup` or one of its loops) connects through BSD sockets;
/// any other (on Apple platforms `NIOTSEventLoopGroup`, Network.framework) does not.
///
/// What differs, read from AsyncHTTPClient 1.37.0 and swift-nio-transport-services 1.28.0:
/// - only plaintext connections on sockets take `FileRegion` writes (`sendfile`):
///   Network.framework's channel takes `ByteBuffer`s alone and stops the process on anything
///   else, and so does NIOSSL's handler on a TLS connection. A `FileRegion` can only be
///   made through a ``PlaintextSocketConnection``, which only ``OwnClient`` gives, for a
///   request it knows goes on such a connection;
/// - only sockets carry a TLS configuration with a client certificate, a private key, a key
///   log callback or `.noHostnameVerification` (AsyncHTTPClient's Network.framework TLS
///   stops the process on each), additional trust roots (it reads `trustRoots` alone and
///   drops them) or a directory of trust roots (it reads `trustRoots = .file` as one PEM
///   file): `NIOTransportServices/TLSConfiguration.swift`.
enum NetworkStack: Equatable, Sendable {
    /// NIOPosix: BSD sockets, NIOSSL for TLS.
    case sockets
    /// Network.framework (NIOTransportServices), or any event loop that is not NIOPosix's.
    case networkFramework

    /// The stack connections made on `group` (a group or one of its loops) run on.
    init(_ group: any EventLoopGroup) {
        self = ClientBootstrap(validatingGroup: group) != nil ? .sockets : .networkFramework
    }

    /// What `tls` asks that only NIOSSL (the sockets stack) can do, or nil.
    static func socketsOnlyFeature(of tls: TLSConfiguration?) -> String? {
        guard let tls else { return nil }
        if !tls.certificateChain.isEmpty { return "a client certificate" }
        if tls.privateKey != nil { return "a client private key" }
        if tls.keyLogCallback != nil { return "a TLS key log callback" }
        if tls.certificateVerification == .noHostnameVerification { return "certificate verification without host name verification" }
        if !tls.additionalTrustRoots.isEmpty { return "additional trust roots (additionalTrustRoots)" }
        if case .file(let path)? = tls.trustRoots, isDirectory(path) { return "a directory of trust roots (\(path))" }
        return nil
    }

    private static func isDirectory(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeDirectory
    }

    /// The event loop group FormPost's own clients use for `configuration`: AsyncHTTPClient's
    /// default for the platform (Network.framework on Apple platforms, as Apple recommends
    /// for cellular, VPN and Wi-Fi Assist; NIOPosix elsewhere), unless the TLS
    /// configuration needs NIOSSL, in which case NIOPosix's on every platform.
    static func preferredGroup(for configuration: HTTPClient.Configuration) -> any EventLoopGroup {
        socketsOnlyFeature(of: configuration.tlsConfiguration) == nil ? HTTPClient.defaultEventLoopGroup : MultiThreadedEventLoopGroup.singleton
    }

    /// Why `configuration` cannot run on `group`, or nil when it can: a TLS configuration
    /// that only NIOSSL carries, given a group that is not NIOPosix's.
    static func unsupportedConfiguration(_ configuration: HTTPClient.Configuration, on group: any EventLoopGroup) -> UploadError? {
        guard NetworkStack(group) == .networkFramework, let feature = socketsOnlyFeature(of: configuration.tlsConfiguration) else { return nil }
        return .unsupportedConfiguration("\(feature) needs NIOSSL, which runs on NIOPosix's event loops: pass MultiThreadedEventLoopGroup.singleton as the event loop group, or leave the group to FormPost")
    }

    /// FormPost's own `HTTPClient` on `group`, with `configuration` and redirects off, and why
    /// it cannot send (a TLS configuration that `group` cannot carry; the client is then made
    /// without it, and must refuse every request).
    static func makeClient(configuration: HTTPClient.Configuration, group: any EventLoopGroup) -> (client: OwnClient, problem: UploadError?) {
        var configuration = configuration
        // Every request goes to its own URL's origin and nowhere else: the body is never
        // sent again, by AsyncHTTPClient, on a connection FormPost did not decide for.
        configuration.redirectConfiguration = .disallow
        let problem = NetworkStack.unsupportedConfiguration(configuration, on: group)
        if problem != nil {
            // Never handed to a Network.framework connection: AsyncHTTPClient would stop the
            // process on reading it.
            configuration.tlsConfiguration = nil
        }
        let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
        return (OwnClient(client: client, stack: NetworkStack(group)), problem)
    }

    /// An `HTTPClient` FormPost made (``makeClient(configuration:group:)``), with redirects
    /// off: each request goes to the origin of its own URL, its body on a connection of
    /// ``stack`` to that origin, and nowhere else. A caller's `HTTPClient` is never one: it
    /// may follow a redirect and send the same body again on another connection — over TLS
    /// (http to https) — which FormPost does not see.
    struct OwnClient: Sendable {
        let client: HTTPClient
        /// The stack of the client's event loop group.
        let stack: NetworkStack

        fileprivate init(client: HTTPClient, stack: NetworkStack) {
            self.client = client
            self.stack = stack
        }

        /// The connection a request to `origin` writes its body on, when it takes `FileRegion`s:
        /// plaintext (`http`: AsyncHTTPClient speaks HTTP/1.1 there, to the origin or
        /// through an HTTP or SOCKS proxy, both plaintext) on NIOPosix's sockets; nil for TLS
        /// and for Network.framework.
        func plaintextSocketConnection(to origin: Origin) -> PlaintextSocketConnection? {
            stack == .sockets && origin.scheme == "http" ? PlaintextSocketConnection() : nil
        }
    }

    /// A connection known to be plaintext HTTP/1.1 on NIOPosix's sockets, the only kind that
    /// takes `FileRegion` writes (`sendfile`); only ``OwnClient`` makes one. Every
    /// `FileRegion` FormPost writes is made here (`scripts/check-platforms` holds to it).
    struct PlaintextSocketConnection: Sendable {
        fileprivate init() {}

        /// The bytes of `handle` from `start` up to `end`, as a write that the connection
        /// sends unread, by `sendfile`.
        func sendfileWrite(of handle: NIOFileHandle, from start: Int64, to end: Int64) -> IOData {
            .fileRegion(FileRegion(fileHandle: handle, readerIndex: Int(start), endIndex: Int(end)))
        }
    }
}
