import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL

/// The networking stack an AsyncHTTPClient connection runs on, decided as AsyncHTTPClient
/// decides it: an event loop that NIOPosix's `ClientBootstrap(validatingGroup:)` accepts
/// (a `MultiThreadedEventLoopGroup` or one of its loops) connects through BSD sockets;
/// any other (on Apple platforms `NIOTSEventLoopGroup`, Network.framework) does not.
///
/// What differs, read from AsyncHTTPClient 1.37.0 and swift-nio-transport-services 1.28.0:
/// - only sockets take `FileRegion` writes (`sendfile`): Network.framework's channel takes
///   `ByteBuffer`s alone and stops the process on anything else;
/// - only sockets carry a TLS configuration with a client certificate, a private key, a key
///   log callback or `.noHostnameVerification`: AsyncHTTPClient's Network.framework TLS stops
///   the process on each (`NIOTransportServices/TLSConfiguration.swift`).
enum NetworkStack: Equatable, Sendable {
    /// NIOPosix: BSD sockets, NIOSSL for TLS.
    case sockets
    /// Network.framework (NIOTransportServices), or any event loop that is not NIOPosix's.
    case networkFramework

    /// The stack connections made on `group` (a group or one of its loops) run on.
    init(_ group: any EventLoopGroup) {
        self = ClientBootstrap(validatingGroup: group) != nil ? .sockets : .networkFramework
    }

    /// Whether a body may be written as `FileRegion`s (`sendfile`): plaintext HTTP/1.1 on
    /// sockets only. Over TLS the bytes must be read to be encrypted.
    func sendsFileRegions(scheme: String?) -> Bool {
        self == .sockets && scheme?.lowercased() == "http"
    }

    /// What `tls` asks that only NIOSSL (the sockets stack) can do, or nil.
    static func socketsOnlyFeature(of tls: TLSConfiguration?) -> String? {
        guard let tls else { return nil }
        if !tls.certificateChain.isEmpty { return "a client certificate" }
        if tls.privateKey != nil { return "a client private key" }
        if tls.keyLogCallback != nil { return "a TLS key log callback" }
        if tls.certificateVerification == .noHostnameVerification { return "certificate verification without host name verification" }
        return nil
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
}
