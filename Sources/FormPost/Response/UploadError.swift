/// Every error the `FormPost` client throws (besides ``Multipart/MultipartError`` for the body).
public enum UploadError: Error, Sendable, CustomStringConvertible {
    /// GET and HEAD carry no form.
    case methodCannotCarryBody(HTTPMethod)
    /// The status is not among the acceptable ones.
    case unacceptableStatus(Int, contentType: String?, bodyPrefix: String)
    /// The content type is not among the acceptable ones.
    case unacceptableContentType(String, acceptable: [String])
    /// The body could not be decoded; the raw body is kept.
    case decodingFailed(String, body: [UInt8])
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

    public var description: String {
        switch self {
        case .methodCannotCarryBody(let method):
            return "\(method) requests cannot carry a form: use POST, PUT or PATCH."
        case .unacceptableStatus(let status, let contentType, let prefix):
            return "The server answered \(status)\(contentType.map { " (\($0))" } ?? ""): \(prefix.isEmpty ? "<empty body>" : prefix)"
        case .unacceptableContentType(let type, let acceptable):
            return "The response's content type \"\(type)\" is not one of \(acceptable.joined(separator: ", "))."
        case .decodingFailed(let reason, _):
            return "The response could not be decoded at \(reason)."
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
        }
    }
}
