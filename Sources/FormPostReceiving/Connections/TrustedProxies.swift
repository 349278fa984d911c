import HTTPTypes
import NIOCore

/// The reverse proxies and load balancers in front of an `UploadServer` whose word on a
/// request's client is taken (`UploadServer/trustedProxies`; `formpost serve
/// --trusted-proxy`). Behind a proxy every connection comes from the proxy; when the
/// connection's peer is in one of these ranges, the client address the receivers count
/// (``ReceiverConfiguration/maxUploadsInProgressPerClient``,
/// ``ReceiverConfiguration/maxBytesInProgressPerClient``) and log is the one the proxies
/// forwarded in the field ``field`` names: `X-Forwarded-For` unless set to `Forwarded`
/// (RFC 7239, its `for=`). The other field is never read. From any other peer these
/// fields are ignored.
///
/// The chain is read from the right, the hop nearest the server first, skipping the
/// addresses that are themselves trusted proxies: the first address that is not one is the
/// client. Each proxy appends the address it was connected from, so only the entries
/// that trusted proxies appended are known true; the leftmost entry was written by
/// whoever sent the request and can be anything — taking it would let a client choose
/// the address its uploads count under, and so escape its limits. A chain whose every
/// address is trusted gives its leftmost one. An entry that is malformed or names no
/// address (`unknown`, an obfuscated identifier such as `_gazonk`, an element without
/// `for=`) ends the walk at the last good hop, the one right of it: what lies left of it
/// was written by a party no trusted proxy vouches for, and what lies right of it was
/// written by trusted proxies. A malformed entry as the rightmost one leaves the peer.
///
/// ```swift
/// let proxies = try TrustedProxies(["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"])
/// ```
public struct TrustedProxies: Sendable, Equatable {
    /// The ranges, as given.
    let ranges: [AddressRange]
    /// The field the client is read from: ``ForwardedField/xForwardedFor`` unless set. Name
    /// the one your proxies write, so that a field a client sent itself is never read.
    public var field = ForwardedField.xForwardedFor

    /// No trusted proxies: every request's client is its connection's peer.
    public init() {
        ranges = []
    }

    /// The proxies in `ranges`: CIDR ranges of IPv4 or IPv6 (`10.0.0.0/8`,
    /// `2001:db8::/32`), a bare address being a range of one (`/32`, `/128`).
    ///
    /// - Throws: ``TrustedProxyError/invalidRange(_:)`` for the first range that is none.
    public init(_ ranges: [String]) throws(TrustedProxyError) {
        var parsed: [AddressRange] = []
        for text in ranges {
            guard let range = AddressRange(text) else { throw .invalidRange(text) }
            parsed.append(range)
        }
        self.ranges = parsed
    }

    /// Whether there are none.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` is a trusted proxy's; an IPv4-mapped IPv6 address counts as its
    /// IPv4 address.
    public func contains(_ address: SocketAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// The client of a request with `fields` that came on a connection from `peer`: the
    /// address the trusted proxies forwarded when `peer` is one of them, else `peer`.
    public func client(of fields: HTTPFields, peer: SocketAddress?) -> SocketAddress? {
        guard let peer, contains(peer), let hops = ForwardingChain.hops(in: fields, reading: field) else { return peer }
        var client = peer
        for hop in hops.reversed() {
            guard case .address(let address)? = hop else { break }
            client = address
            if !contains(address) { break }
        }
        return client
    }
}
