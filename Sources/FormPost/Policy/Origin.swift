#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A URL's origin: scheme, host (case-insensitive) and port (the scheme's default when
/// absent). Credentials stay within one across redirects; a connection pool keys its
/// connections by one.
struct Origin: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int?

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }
}
