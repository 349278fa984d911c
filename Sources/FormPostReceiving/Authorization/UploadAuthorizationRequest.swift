import HTTPTypes
import NIOCore

/// What `UploadServer/authorize` is asked about: a request that can begin an upload,
/// seen before a byte of its body is read.
public struct UploadAuthorizationRequest: Sendable {
    /// The protocol the request begins an upload by.
    public let uploadProtocol: UploadProtocol
    /// The request's method: `POST` or `PUT`.
    public let method: String
    /// The request's path, without its query.
    public let path: String
    /// The request's query, without `?`; empty when it has none.
    public let query: String
    /// The request's header fields, as the client sent them.
    public let headerFields: HTTPFields
    /// The client's address: the connection's peer, or the client a trusted proxy
    /// forwarded (`UploadServer/trustedProxies`); nil when unknown.
    public let clientAddress: SocketAddress?

    /// Creates the question about one request.
    public init(uploadProtocol: UploadProtocol, method: String, path: String, query: String, headerFields: HTTPFields, clientAddress: SocketAddress?) {
        self.uploadProtocol = uploadProtocol
        self.method = method
        self.path = path
        self.query = query
        self.headerFields = headerFields
        self.clientAddress = clientAddress
    }
}
