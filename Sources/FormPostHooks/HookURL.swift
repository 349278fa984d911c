import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A hook's URL as given (`https://user:secret@hooks.example/authorize?key=…`), and the
/// two forms it is used in: the one requests go to, without its credentials (which are sent
/// as `Authorization: Basic` instead), and the one that may be shown — in a log line, in an
/// error's description — with neither credentials nor query nor fragment.
struct HookURL: Sendable {
    /// The URL requests are sent to: the given one without `user:password@`.
    let target: String
    /// The user and password of the URL's `user:password@`, percent-decoded; nil without.
    let credentials: (user: String, password: String)?
    /// The URL as it may be logged: scheme, host, port and path only.
    let redacted: String

    /// The forms of `url`.
    init(_ url: String) {
        guard var components = URLComponents(string: url) else {
            target = url
            credentials = nil
            redacted = "(a hook URL that cannot be parsed)"
            return
        }
        credentials = components.user.map { ($0, components.password ?? "") }
        components.user = nil
        components.password = nil
        target = components.string ?? url
        components.query = nil
        components.fragment = nil
        redacted = components.string ?? "(a hook URL that cannot be parsed)"
    }

    /// `url` as it may be logged: without credentials, query or fragment.
    static func redacted(_ url: String) -> String { HookURL(url).redacted }
}
