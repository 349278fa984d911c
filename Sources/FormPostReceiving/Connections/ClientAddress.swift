import HTTPTypes
import NIOCore

/// The client address a request came from, as the receivers of resumable uploads count
/// their uploads per client (``ReceiverConfiguration/maxUploadsInProgressPerClient``): the
/// connection's peer — an IPv4 address, or the /56 prefix of an IPv6 one (a host commonly
/// holds a whole /64, and a home or a small site a /56: 256 of them), an IPv4-mapped IPv6
/// address as its IPv4 address. Header fields such as `X-Forwarded-For` are taken only
/// from a trusted proxy (``TrustedProxies``, through ``ReceiverRequest/clientAddress``):
/// otherwise, behind a reverse proxy, every request has the proxy's address.
package enum ClientAddress {
    /// The key `address` counts under; nil when it is not an IP address.
    package static func key(_ address: SocketAddress?) -> String? {
        guard let address, let bytes = AddressRange.bytes(of: address) else { return nil }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let prefix = Array(bytes[0..<7]) + [0]
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(prefix[$0]) << 8 | UInt16(prefix[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/56"
    }
}
