import NIOCore

/// A range of IP addresses in CIDR notation — `10.0.0.0/8`, `2001:db8::/32`, or a bare
/// address, which is a range of one (`/32`, `/128`) — as ``TrustedProxies`` holds them.
struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    /// The range's first address: 4 bytes (IPv4) or 16 (IPv6), the bits past the prefix zero.
    let bytes: [UInt8]
    /// How many leading bits an address shares with ``bytes`` to be in the range.
    let prefixLength: Int

    /// The range `text` writes, nil when it is none: an IPv4 or IPv6 address, optionally
    /// followed by `/` and a prefix length of at most 32 or 128.
    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        // inet_pton's text only: no zone identifier (`%eth0`), no brackets, no spaces.
        guard parts[0].allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == ":") }),
              let address = try? SocketAddress(ipAddress: String(parts[0]), port: 0), let bytes = Self.bytes(of: address) else { return nil }
        let width = bytes.count * 8
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), let length = Int(parts[1]), (0...width).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = width
        }
        self.bytes = Self.masked(bytes, to: prefixLength)
    }

    /// Whether `address` is in the range; an IPv4-mapped IPv6 address (`::ffff:10.1.2.3`)
    /// counts as its IPv4 address.
    func contains(_ address: SocketAddress) -> Bool {
        guard let other = Self.bytes(of: address), other.count == bytes.count else { return false }
        return Self.masked(other, to: prefixLength) == bytes
    }

    var description: String {
        (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: bytes), port: 0).ipAddress).flatMap { $0 }.map { "\($0)/\(prefixLength)" } ?? "?"
    }

    /// The bytes of an IP address: 4 for IPv4 and for IPv4-mapped IPv6, else 16; nil when
    /// `address` is not an IP address.
    static func bytes(of address: SocketAddress) -> [UInt8]? {
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12..<16]) }
            return bytes
        default:
            return nil
        }
    }

    private static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 0 ? 0 : byte & ~UInt8(0xFF >> kept)
        }
    }
}
