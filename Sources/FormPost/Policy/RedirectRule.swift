#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What to do with a redirect, as browsers do: 307 and 308 repeat the method and the
/// body; 303 turns into GET without a body (HEAD stays HEAD); 301 and 302 turn a POST
/// into a GET without a body and repeat other methods.
public enum RedirectRule {
    /// The follow-up request: its URL, method, and whether the body is sent again; nil
    /// when `status` is not a redirect or `location` is missing or invalid.
    public static func follow(status: Int, method: RequestMethod, location: String?, from url: URL) -> (url: URL, method: RequestMethod, keepsBody: Bool)? {
        guard [301, 302, 303, 307, 308].contains(status), let location, let target = URL(string: location, relativeTo: url)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        switch status {
        case 307, 308:
            return (target, method, true)
        case 303:
            return (target, method == .head ? .head : .get, false)
        default:
            return method == .post ? (target, .get, false) : (target, method, true)
        }
    }

    /// The header fields that carry credentials, dropped on a redirect to another origin.
    public static let credentialFields: Set<HTTPField.Name> = [.authorization, .cookie, .proxyAuthorization]

    /// The header fields to send on a redirect from `source` to `target`: all of them on the
    /// same origin (scheme, host and port); without the credential fields on another one,
    /// unless the caller `trusted` the redirect — and never from https to http.
    public static func headers(_ headers: HTTPFields, from source: URL, to target: URL, trusted: Bool) -> HTTPFields {
        let downgrade = source.scheme?.lowercased() == "https" && target.scheme?.lowercased() == "http"
        guard downgrade || (!trusted && Origin(source) != Origin(target)) else { return headers }
        return headers.filter { !credentialFields.contains($0.name) }
    }
}
