/// Which header field a ``TrustedProxies`` reads the forwarded client from: the one the
/// proxies in front of the server write, and only that one.
///
/// A proxy appends what it saw to the field it writes and passes on the others as the
/// client sent them. Reading any other field would read what a client wrote itself:
/// behind a proxy that appends to `X-Forwarded-For` alone (nginx's
/// `$proxy_add_x_forwarded_for`, and most load balancers), a `Forwarded` the client sent
/// names whatever address it likes, and so the client would escape the per-client limits.
public enum ForwardedField: String, Sendable, Equatable, CaseIterable {
    /// `Forwarded` (RFC 7239) only: for proxies that write it.
    case forwarded
    /// `X-Forwarded-For` only: what nginx, HAProxy and most load balancers write; the default.
    case xForwardedFor = "x-forwarded-for"
}
