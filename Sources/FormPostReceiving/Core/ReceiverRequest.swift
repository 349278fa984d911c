import HTTPTypes
import Multipart
import NIOCore

/// A request as the receivers see it, whichever HTTP server took it: the server adapter
/// (Hummingbird's `UploadServer`, or one's own) makes one of each request and sends the
/// ``ReceiverResponse`` a receiver answers.
public struct ReceiverRequest: Sendable {
    /// The method.
    public var method: HTTPRequest.Method
    /// The target's path, percent-encoded as it came.
    public var path: String
    /// The target's query, without `?`; nil for none.
    public var query: String?
    /// The header fields.
    public var headers: HTTPFields
    /// The body.
    public var body: ReceiverRequestBody
    /// The client's address, as the receivers count uploads per client and log it: the
    /// connection's peer, or the client a trusted proxy forwarded; nil when unknown.
    public var clientAddress: SocketAddress?
    /// What an authorization granted the upload the request begins (``UploadGrant``), or nil.
    public var grant: UploadGrant?
    /// The request's connection, or nil where the server gives no handle on it.
    public var connection: (any ReceiverConnection)?

    /// A request of `method` on `path` (and `query`) with `headers` and `body`.
    public init(method: HTTPRequest.Method, path: String, query: String? = nil, headers: HTTPFields = [:],
                body: ReceiverRequestBody = ReceiverRequestBody(), clientAddress: SocketAddress? = nil, grant: UploadGrant? = nil,
                connection: (any ReceiverConnection)? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.clientAddress = clientAddress
        self.grant = grant
        self.connection = connection
    }

    /// The request's target as it came: the path and, after `?`, the query.
    public var target: String {
        query.map { path + "?" + $0 } ?? path
    }

    /// The parts of this request's `multipart/form-data` body (see ``FormParts``).
    ///
    /// - Throws: `MultipartError/missingBoundary(contentType:)` when the request is not multipart.
    public func formParts(limits: MultipartParserLimits = MultipartParserLimits()) throws -> FormParts<ReceiverRequestBody> {
        try FormParts(contentType: headers[.contentType] ?? "", body: body, limits: limits)
    }

    /// Whether a body comes with the request: a positive `Content-Length`, or without one
    /// `Transfer-Encoding` on HTTP/1.1, or a stream of HTTP/2.
    public var declaresBody: Bool {
        if let length = headers[.contentLength].flatMap(Int64.init) { return length > 0 }
        return headers[.transferEncoding] != nil || connection?.isMultiplexedStream == true
    }

    /// The client's address as the log names it, `-` when unknown.
    var loggedClient: String {
        clientAddress?.ipAddress ?? "-"
    }

    /// The metadata granted to the upload the request begins, or nil when none was.
    var grantedMetadata: [String: String]? {
        guard let metadata = grant?.metadata, !metadata.isEmpty else { return nil }
        return metadata
    }
}
