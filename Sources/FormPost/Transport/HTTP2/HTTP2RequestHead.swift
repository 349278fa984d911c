#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOHPACK

/// The HEADERS of an upload over HTTP/2, from the request's `HTTPFields` (its answer's come
/// back through `HTTPFields(_:)` of `HPACKHeaders`).
enum HTTP2RequestHead {
    /// Fields HTTP/2 forbids (RFC 9113 §8.2.2), or that the pseudo-header `:authority` carries.
    private static let notSent: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "te",
                                               "content-length", "content-type"]

    /// The request's HEADERS: the pseudo-header fields (`:authority` from the request's
    /// `Host` field if it has one, from the URL otherwise), then `content-type` and, when the
    /// body's length is known, `content-length`, then the request's own fields (lowercase).
    static func headers(of request: TransportRequest, body: RequestBody, origin: Origin) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(request.headers.count + 6)
        headers.add(name: ":method", value: request.method.rawValue)
        headers.add(name: ":scheme", value: origin.scheme)
        // A Host field the caller set names the authority, as AsyncHTTPClient makes it one.
        headers.add(name: ":authority", value: request.headers[hostField] ?? authority(origin))
        headers.add(name: ":path", value: path(of: request.url))
        headers.add(name: "content-type", value: body.contentType)
        if let length = body.contentLength { headers.add(name: "content-length", value: String(length)) }
        for field in request.headers where !notSent.contains(field.name.canonicalName) {
            headers.add(name: field.name.canonicalName, value: field.value)
        }
        return headers
    }

    private static let hostField = HTTPField.Name("Host")!

    /// `host[:port]`, an IPv6 address in brackets, the port left out when it is the scheme's default.
    private static func authority(_ origin: Origin) -> String {
        let host = origin.host.contains(":") ? "[\(origin.host)]" : origin.host
        guard let port = origin.port, port != (origin.scheme == "https" ? 443 : 80) else { return host }
        return "\(host):\(port)"
    }

    /// The URL's path and query as sent, percent-encoded; `/` when it has no path.
    private static func path(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        let query = url.query(percentEncoded: true).map { "?" + $0 } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }
}
