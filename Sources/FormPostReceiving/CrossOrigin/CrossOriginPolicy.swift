import HTTPTypes

/// Which other origins' pages may upload (CORS): a browser app on `https://app.example.com`
/// sending to a receiver on `https://uploads.example.com` needs the receiver to say so, or
/// the browser refuses the upload before its first byte. With a policy, ``UploadRoutes``
/// answers a preflight (`OPTIONS` with `Access-Control-Request-Method`) from an origin it
/// lists itself — before any gate, touching no storage — with the methods, the request
/// fields the tus and draft clients send, and how long the answer may be kept; and adds to
/// every answer to such an origin `Access-Control-Allow-Origin` and the answer fields a
/// client reads (`Location`, `Upload-Offset`, …) in `Access-Control-Expose-Headers`. An
/// origin it does not list gets no CORS field (its preflight is answered 403), and the
/// browser refuses to let its page read the answer. Without a policy no CORS field is
/// answered at all. Cookies and the browser's own HTTP authentication are never allowed
/// (`Access-Control-Allow-Credentials` is not sent): an app that authorizes uploads sends a
/// signed URL, or an `Authorization` field of its own, which the policy allows.
public struct CrossOriginPolicy: Sendable, Equatable {
    /// The origins allowed, each `scheme://host` or `scheme://host:port` as a browser sends
    /// it in `Origin`, or `*` for any.
    public let allowedOrigins: [String]
    /// The request fields a page may send beyond the CORS-safelisted ones.
    public var allowedHeaders: [String] = Self.uploadRequestFields
    /// The answer fields a page may read beyond the CORS-safelisted ones.
    public var exposedHeaders: [String] = Self.uploadAnswerFields
    /// How long a browser may keep a preflight's answer (`Access-Control-Max-Age`).
    public var maxAge: Duration = .seconds(7200)

    /// The fields tus 1.0 and the IETF draft's clients send (tus-js-client, Uppy), with
    /// `Content-Type`, `Authorization` and `X-HTTP-Method-Override`.
    public static let uploadRequestFields = [
        "Authorization", "Content-Type", "Tus-Resumable", "Upload-Length", "Upload-Offset", "Upload-Metadata", "Upload-Checksum",
        "Upload-Concat", "Upload-Defer-Length", "Upload-Complete", "Upload-Draft-Interop-Version", "X-HTTP-Method-Override",
        "X-Requested-With",
    ]
    /// The fields of the receivers' answers that their clients read.
    public static let uploadAnswerFields = [
        "Location", "Upload-Offset", "Upload-Length", "Upload-Metadata", "Upload-Expires", "Upload-Complete", "Upload-Limit",
        "Upload-Draft-Interop-Version", "Tus-Resumable", "Tus-Version", "Tus-Extension", "Tus-Max-Size", "Tus-Checksum-Algorithm",
        "Retry-After",
    ]

    /// A policy allowing `allowedOrigins`.
    ///
    /// - Throws: ``CrossOriginPolicyError`` for an origin that is not `*` nor
    ///   `http(s)://host[:port]` (no path, no trailing `/`), or for no origin at all.
    public init(allowedOrigins: [String]) throws {
        guard !allowedOrigins.isEmpty else { throw CrossOriginPolicyError.noOrigin }
        for origin in allowedOrigins where !Self.isOrigin(origin) { throw CrossOriginPolicyError.invalidOrigin(origin) }
        self.allowedOrigins = allowedOrigins
    }

    /// What `Access-Control-Allow-Origin` answers `origin`, or nil when it is not allowed.
    func allowOrigin(_ origin: String) -> String? {
        if allowedOrigins.contains("*") { return "*" }
        return allowedOrigins.contains { $0.lowercased() == origin.lowercased() } ? origin : nil
    }

    /// Whether `text` is `*` or an origin as browsers serialise it.
    static func isOrigin(_ text: String) -> Bool {
        if text == "*" { return true }
        for scheme in ["http://", "https://"] where text.lowercased().hasPrefix(scheme) {
            let authority = text.dropFirst(scheme.count)
            return !authority.isEmpty && !authority.contains("/") && !authority.contains("@") && !authority.contains(" ")
        }
        return false
    }
}
