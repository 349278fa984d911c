/// Every error the `FormPost` client throws (besides `MultipartError` for the body).
public enum UploadError: Error, Sendable, CustomStringConvertible {
    /// GET and HEAD carry no form.
    case methodCannotCarryBody(RequestMethod)
    /// The status is not among the acceptable ones.
    case unacceptableStatus(Int, contentType: String?, bodyPrefix: String)
    /// The content type (nil when the response has none) is not among the acceptable ones.
    case unacceptableContentType(String?, acceptable: [String], status: Int, bodyPrefix: String)
    /// The body could not be decoded; the reason names the path in the document, and the raw body is kept.
    case decodingFailed(String, body: [UInt8])
    /// The response has no body where the serializer needs one (anything but 204, 205 or a HEAD request).
    case emptyResponse(status: Int)
    /// Request parameters the chosen encoding cannot hold.
    case invalidParameters(String)
    /// The host name could not be resolved.
    case cannotResolve(host: String, reason: String)
    /// No connection could be made.
    case cannotConnect(host: String, port: Int, reason: String)
    /// The connect or total time limit passed.
    case timedOut(String)
    /// More redirects than allowed.
    case tooManyRedirects(Int)
    /// The URL cannot be requested.
    case invalidURL(String)
    /// The connection failed during the exchange.
    case transport(String)
    /// The response's body is larger than ``UploadOptions/maxResponseBytes``.
    case responseTooLarge(limit: Int)
    /// The TLS handshake with `host` failed for a reason other than its certificate
    /// (no common protocol version or cipher, an alert from the server, a broken connection).
    case tlsHandshakeFailed(host: String, reason: String)
    /// The server's certificate was not accepted: issued by a CA that is not trusted,
    /// expired or not yet valid, or not for `host`.
    case untrustedCertificate(host: String, reason: String)
    /// The proxy refused to open the way: 407, it asks for credentials; nil, it answered
    /// `CONNECT` with another status or something that is not HTTP.
    case proxyRefused(status: Int?)
    /// The transport was configured with something its networking stack cannot do (e.g.
    /// a client certificate on Network.framework); nothing was sent.
    case unsupportedConfiguration(String)

    public var description: String {
        switch self {
        case .methodCannotCarryBody(let method):
            return "\(method) requests cannot carry a form: use POST, PUT or PATCH."
        case .unacceptableStatus(let status, let contentType, let prefix):
            return "The server answered \(status)\(contentType.map { " (\($0))" } ?? ""): \(prefix.isEmpty ? "<empty body>" : prefix)"
        case .unacceptableContentType(let type, let acceptable, let status, let prefix):
            let named = type.map { "\"\($0)\"" } ?? "(none)"
            return "The response's content type \(named) is not one of \(acceptable.joined(separator: ", ")) (status \(status)): \(prefix.isEmpty ? "<empty body>" : prefix)"
        case .decodingFailed(let reason, _):
            return "The response could not be decoded: \(reason)."
        case .emptyResponse(let status):
            return "The server answered \(status) with an empty body where one was needed."
        case .invalidParameters(let reason):
            return "The parameters cannot be encoded: \(reason)."
        case .cannotResolve(let host, let reason):
            return "Could not resolve host \(host): \(reason)."
        case .cannotConnect(let host, let port, let reason):
            return "Could not connect to \(host) port \(port): \(reason)."
        case .timedOut(let what):
            return "The request timed out: \(what)."
        case .tooManyRedirects(let count):
            return "Stopped after \(count) redirects."
        case .invalidURL(let url):
            return "\(url) is not an http or https URL."
        case .transport(let reason):
            return "The connection failed: \(reason)."
        case .responseTooLarge(let limit):
            return "The response's body is larger than \(limit) bytes (UploadOptions.maxResponseBytes): raise the limit to read it."
        case .tlsHandshakeFailed(let host, let reason):
            return "The TLS handshake with \(host) failed: \(reason)."
        case .proxyRefused(let status) where status == 407:
            return "The proxy asks for credentials (407): give them in the proxy URL, http://user:password@host:port (HTTPClient.Configuration.Proxy's authorization)."
        case .proxyRefused:
            return "The proxy refused to open a connection to the server (CONNECT was not answered 2xx)."
        case .unsupportedConfiguration(let reason):
            return "The transport cannot be used as configured: \(reason)."
        case .untrustedCertificate(let host, let reason):
            return "The certificate of \(host) was not accepted: \(reason). Trust its CA with --cacert FILE (TLSConfiguration.trustRoots), or skip verification with -k."
        }
    }
}
