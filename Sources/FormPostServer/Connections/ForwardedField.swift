/// Which header field a ``TrustedProxies`` reads the forwarded client from.
///
/// A proxy appends what it saw to the field it writes and passes on the others as the
/// client sent them. Reading only the field the proxies write leaves a client nothing to
/// forge: behind a proxy that appends to `X-Forwarded-For` alone (nginx's
/// `$proxy_add_x_forwarded_for`), a `Forwarded` the client sent would otherwise be read
/// first (``either``) and name whatever address it likes.
public enum ForwardedField: String, Sendable, Equatable, CaseIterable {
    /// `Forwarded` (RFC 7239) when the request has one, else `X-Forwarded-For`: for proxies
    /// that write `Forwarded`, or strip a client's before appending to `X-Forwarded-For`.
    case either
    /// `Forwarded` only.
    case forwarded
    /// `X-Forwarded-For` only.
    case xForwardedFor = "x-forwarded-for"
}
