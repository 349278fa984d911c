import FormPostServer
import HTTPTypes
import NIOCore
import Testing

/// ``TrustedProxies``: its ranges, and the client it takes from `Forwarded` and
/// `X-Forwarded-For` — only from a trusted peer, the rightmost untrusted address.
@Suite("Trusted proxies")
struct TrustedProxiesTests {
    static func address(_ text: String) throws -> SocketAddress {
        try SocketAddress(ipAddress: text, port: 4711)
    }

    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return fields
    }

    /// The client `proxies` derive for `pairs` on a connection from `peer`, as text.
    static func client(_ proxies: TrustedProxies, _ pairs: [(String, String)], peer: String = "10.0.0.1") throws -> String? {
        proxies.client(of: fields(pairs), peer: try address(peer))?.ipAddress
    }

    static let proxies: TrustedProxies = {
        (try? TrustedProxies(["10.0.0.0/8", "2001:db8:ffff::/48", "192.0.2.7"])) ?? TrustedProxies()
    }()

    @Test("CIDR ranges of IPv4 and IPv6 hold what they should; a bare address is a range of one; a mapped IPv4 address is its IPv4 one")
    func ranges() throws {
        let proxies = Self.proxies
        #expect(!proxies.isEmpty)
        for inside in ["10.0.0.1", "10.255.255.255", "2001:db8:ffff::1", "2001:db8:ffff:ffff::9", "192.0.2.7", "::ffff:10.1.2.3"] {
            #expect(proxies.contains(try Self.address(inside)), "\(inside)")
        }
        for outside in ["11.0.0.1", "9.255.255.255", "2001:db8:fffe::1", "192.0.2.8", "::ffff:11.0.0.1", "::a00:1"] {
            #expect(!proxies.contains(try Self.address(outside)), "\(outside)")
        }
        let odd = try TrustedProxies(["10.1.2.3/9", "0.0.0.0/0"])
        #expect(odd.contains(try Self.address("203.0.113.1")))
        #expect(!odd.contains(try Self.address("2001:db8::1")))
        #expect(try TrustedProxies(["::/0"]).contains(try Self.address("2001:db8::1")))
    }

    @Test("a range that is none is refused with a sentence naming it")
    func invalidRanges() {
        for text in ["10.0.0.0/33", "2001:db8::/129", "10.0.0.0/", "10.0.0/8", "example.com", "", "10.0.0.0/-1", "10.0.0.0/8/8", "[::1]", "fe80::1%eth0"] {
            #expect(throws: TrustedProxyError.invalidRange(text)) { try TrustedProxies([text]) }
        }
        #expect(String(describing: TrustedProxyError.invalidRange("x")) == "x is not an IP address or a CIDR range such as 10.0.0.0/8 or 2001:db8::/32")
    }

    @Test("X-Forwarded-For: the rightmost address that is no trusted proxy, whatever the client wrote left of it")
    func forwardedFor() throws {
        let proxies = Self.proxies
        #expect(try Self.client(proxies, [("X-Forwarded-For", "203.0.113.5")]) == "203.0.113.5")
        // A client that writes the field itself only adds entries to the left of the true one.
        #expect(try Self.client(proxies, [("X-Forwarded-For", "198.51.100.1, 203.0.113.5")]) == "203.0.113.5")
        // Proxies of the chain are skipped; a chain of proxies only gives its leftmost.
        #expect(try Self.client(proxies, [("X-Forwarded-For", "198.51.100.1,203.0.113.5, 10.9.9.9 ,192.0.2.7")]) == "203.0.113.5")
        #expect(try Self.client(proxies, [("X-Forwarded-For", "10.2.2.2, 10.3.3.3")]) == "10.2.2.2")
        // Several field lines are one list.
        #expect(try Self.client(proxies, [("X-Forwarded-For", "198.51.100.1"), ("X-Forwarded-For", "203.0.113.6, 10.0.0.2")]) == "203.0.113.6")
        // IPv6, bare or bracketed, with a port; IPv4 with a port.
        #expect(try Self.client(proxies, [("X-Forwarded-For", "2001:db8:1::5")]) == "2001:db8:1::5")
        #expect(try Self.client(proxies, [("X-Forwarded-For", "[2001:db8:1::6]:4711")]) == "2001:db8:1::6")
        #expect(try Self.client(proxies, [("X-Forwarded-For", "203.0.113.7:4711")]) == "203.0.113.7")
        #expect(try Self.client(proxies, [("X-Forwarded-For", "203.0.113.8")], peer: "2001:db8:ffff::1") == "203.0.113.8")
    }

    @Test("Forwarded, when named: its for= (quoted IPv6 with a port too); unknown and obfuscated nodes stop the walk")
    func forwarded() throws {
        var proxies = Self.proxies
        proxies.field = .forwarded
        #expect(try Self.client(proxies, [("Forwarded", "for=203.0.113.9;proto=https;by=10.0.0.1")]) == "203.0.113.9")
        #expect(try Self.client(proxies, [("Forwarded", "for=\"[2001:db8:cafe::17]:4711\"")]) == "2001:db8:cafe::17")
        #expect(try Self.client(proxies, [("Forwarded", "For=\"198.51.100.1\", for=203.0.113.10;host=example.com, for=10.1.1.1")]) == "203.0.113.10")
        #expect(try Self.client(proxies, [("Forwarded", "for=203.0.113.11"), ("X-Forwarded-For", "198.51.100.2")]) == "203.0.113.11")
        // A quoted comma does not split an element.
        #expect(try Self.client(proxies, [("Forwarded", "for=198.51.100.1;host=\"a,b\", for=203.0.113.14")]) == "203.0.113.14")
        // A hop that names no address: what lies left of it is nobody's word; the peer counts.
        #expect(try Self.client(proxies, [("Forwarded", "for=203.0.113.12, for=unknown")]) == "10.0.0.1")
        #expect(try Self.client(proxies, [("Forwarded", "for=203.0.113.12, for=_hidden")]) == "10.0.0.1")
        #expect(try Self.client(proxies, [("Forwarded", "for=203.0.113.12, proto=http")]) == "10.0.0.1")
        #expect(try Self.client(Self.proxies, [("X-Forwarded-For", "203.0.113.12, unknown")]) == "10.0.0.1")
        // An unknown hop beyond the client does not matter.
        #expect(try Self.client(proxies, [("Forwarded", "for=unknown, for=203.0.113.13")]) == "203.0.113.13")
    }

    @Test("only the field named is read, X-Forwarded-For by default: behind nginx, a Forwarded the client sent is not read; and the other way round")
    func namedField() throws {
        var forwarded = Self.proxies
        forwarded.field = .forwarded
        #expect(Self.proxies.field == .xForwardedFor)
        let forged = [("Forwarded", "for=198.51.100.99"), ("X-Forwarded-For", "203.0.113.5")]
        #expect(try Self.client(Self.proxies, forged) == "203.0.113.5", "the default reads X-Forwarded-For alone")
        #expect(try Self.client(forwarded, forged) == "198.51.100.99")
        #expect(try Self.client(forwarded, [("X-Forwarded-For", "203.0.113.5")]) == "10.0.0.1", "no Forwarded: the peer")
        #expect(try Self.client(Self.proxies, [("Forwarded", "for=198.51.100.99")]) == "10.0.0.1", "no X-Forwarded-For: the peer")
        #expect(ForwardedField.allCases.map(\.rawValue) == ["forwarded", "x-forwarded-for"])
    }

    @Test("a malformed entry ends the walk at the last good hop right of it, not at the proxy")
    func malformedEntryEndsAtLastGoodHop() throws {
        var forwarded = Self.proxies
        forwarded.field = .forwarded
        // What nginx appended right of the client's garbage is still read.
        #expect(try Self.client(Self.proxies, [("X-Forwarded-For", "not-an-address, 203.0.113.20")]) == "203.0.113.20")
        #expect(try Self.client(Self.proxies, [("X-Forwarded-For", "203.0.113.1 198.51.100.1, 203.0.113.21")]) == "203.0.113.21")
        #expect(try Self.client(Self.proxies, [("X-Forwarded-For", ",203.0.113.22")]) == "203.0.113.22")
        #expect(try Self.client(forwarded, [("Forwarded", "for=\"junk, for=203.0.113.23")]) == "203.0.113.23", "an unclosed quote swallows nothing")
        #expect(try Self.client(forwarded, [("Forwarded", "for=\"junk"), ("Forwarded", "for=203.0.113.26")]) == "203.0.113.26", "nor another line")
        #expect(try Self.client(forwarded, [("Forwarded", "for=;;, for=203.0.113.24")]) == "203.0.113.24")
        // Right of the bad entry only trusted proxies: the walk stops at the last of them.
        #expect(try Self.client(Self.proxies, [("X-Forwarded-For", "203.0.113.25, garbage, 10.4.4.4")]) == "10.4.4.4")
    }

    @Test("a malformed value as the rightmost entry counts the request as its peer's")
    func garbage() throws {
        let proxies = Self.proxies
        var forwarded = Self.proxies
        forwarded.field = .forwarded
        for value in ["", "203.0.113.1 198.51.100.1", "203.0.113.1,,", "example.com", "203.0.113.1:99999", "[2001:db8::1", "2001:db8::1]:80",
                      "203.0.113.1; drop table", "1.2.3.4.5", "fe80::1%eth0", "_", "::ffff:zz"] {
            #expect(try Self.client(proxies, [("X-Forwarded-For", value)]) == "10.0.0.1", "X-Forwarded-For: \(value)")
        }
        for value in ["for=", "for=\"203.0.113.1", "for=203.0.113.1;for=198.51.100.1", "203.0.113.1", "for=[2001:db8::1]", "for=203.0.113.1;;",
                      "for=\"2001:db8::1\"", "for=203.0.113.1 junk", "=x", "for=203.0.113.1,"] {
            #expect(try Self.client(forwarded, [("Forwarded", value)]) == "10.0.0.1", "Forwarded: \(value)")
        }
    }

    @Test("from a peer that is no trusted proxy, or with none trusted, the fields are ignored")
    func untrustedPeer() throws {
        let spoofed = [("X-Forwarded-For", "198.51.100.1"), ("Forwarded", "for=198.51.100.2")]
        #expect(try Self.client(Self.proxies, spoofed, peer: "203.0.113.50") == "203.0.113.50")
        #expect(try Self.client(Self.proxies, spoofed, peer: "2001:db8:1::50") == "2001:db8:1::50")
        #expect(try Self.client(TrustedProxies(), spoofed) == "10.0.0.1")
        #expect(TrustedProxies().client(of: Self.fields(spoofed), peer: nil) == nil)
    }
}
