import FormPostReceiving
import Hummingbird
import NIOCore

/// A request context that knows its connection, so that `UploadReceiver` can close it
/// after answering a client that would go on sending (bytes after the closing delimiter).
/// With other contexts the receiver answers all the same, and the server reads and
/// discards what the client still sends.
public struct ReceiverRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The request's connection.
    public let channel: any Channel
    /// The address of the request's client, as the receivers count their uploads per
    /// client and log it: the connection's peer, or the client a trusted proxy forwarded
    /// (`TrustedProxies/client(of:peer:)`, which ``UploadServer`` applies).
    public var clientAddress: SocketAddress?
    /// What ``UploadServer/authorize`` granted the upload this request begins
    /// (`UploadAuthorization/allowWith(_:)`), or nil: the receivers keep its metadata
    /// with the upload and put it in the upload's events.
    public var grant: UploadGrant?

    /// Creates the context of a request on `source`'s connection.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        clientAddress = source.channel.remoteAddress
    }
}
