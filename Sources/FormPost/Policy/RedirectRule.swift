import Foundation

/// What to do with a redirect, as browsers do: 307 and 308 repeat the method and the
/// body; 303 turns into GET without a body (HEAD stays HEAD); 301 and 302 turn a POST
/// into a GET without a body and repeat other methods.
public enum RedirectRule {
    /// The follow-up request: its URL, method, and whether the body is sent again; nil
    /// when `status` is not a redirect or `location` is missing or invalid.
    public static func follow(status: Int, method: HTTPMethod, location: String?, from url: URL) -> (url: URL, method: HTTPMethod, keepsBody: Bool)? {
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
}
