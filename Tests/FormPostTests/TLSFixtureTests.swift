import Foundation
import Testing

/// The test certificates are ones Apple platforms accept, so the TLS suites mean the same on
/// macOS as on Linux; and the rules themselves catch a certificate that breaks them.
@Suite struct TLSFixtureTests {
    @Test func serverCertificatesMeetApplesRules() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        for path in [fixtures.certificatePath, fixtures.wrongHostCertificatePath, fixtures.untrustedCertificatePath] {
            let rules = try await offPool { try AppleServerCertificateRules(certificateAt: path) }
            #expect(rules.violations.isEmpty, "\(path): \(rules.violations)")
        }
    }

    /// What curl and NIOSSL accept but Apple refuses: no serverAuth usage, 900 days.
    @Test func theRulesRefuseACertificateApplesTrustWouldRefuse() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let extensions = fixtures.directory + "/lax.cnf"
        try "subjectAltName=DNS:localhost\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        let signed = try await offPool {
            try ChildProcess("openssl", ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                                         "-CAcreateserial", "-out", "lax.pem", "-days", "900", "-extfile", "lax.cnf"],
                             stdout: .discard, directory: fixtures.directory).finish()
        }
        #expect(signed.status == 0)
        let rules = try await offPool { try AppleServerCertificateRules(certificateAt: fixtures.directory + "/lax.pem") }
        #expect(rules.violations.count == 2, "\(rules.violations)")
        #expect(rules.violations.contains { $0.contains("serverAuth") })
        #expect(rules.violations.contains { $0.contains("900 days") })
    }
}
