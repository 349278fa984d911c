import Foundation

/// What Apple's `SecTrust` requires of a TLS server certificate that chains to a private CA
/// (Apple's "Requirements for trusted certificates in iOS 13 and macOS 10.15"), which
/// Network.framework applies whenever custom trust roots are given: curl and NIOSSL accept
/// certificates that break these rules, Apple platforms refuse them.
///
/// Read from the certificate by `openssl x509`, so the check is independent of the code that
/// made it.
struct AppleServerCertificateRules {
    /// What the certificate breaks, as sentences; empty when Apple would accept it.
    let violations: [String]

    init(certificateAt path: String) throws {
        let text = try Self.openssl(["x509", "-in", path, "-noout", "-text"])
        let dates = try Self.openssl(["x509", "-in", path, "-noout", "-startdate", "-enddate"])
        var violations: [String] = []
        if !text.contains("X509v3 Subject Alternative Name") {
            violations.append("it names no host in subjectAltName (Apple ignores the common name)")
        }
        let usage = text.components(separatedBy: "X509v3 Extended Key Usage:").dropFirst().first?
            .split(separator: "\n", maxSplits: 2).dropFirst().first ?? ""
        if !usage.contains("TLS Web Server Authentication") {
            violations.append("its extendedKeyUsage lacks serverAuth")
        }
        if !text.contains("Signature Algorithm: ecdsa-with-SHA256") && !text.contains("sha256With")
            && !text.contains("SHA384") && !text.contains("SHA512") {
            violations.append("it is not signed with SHA-2")
        }
        if let days = Self.validityDays(dates), days > 825 {
            violations.append("it is valid for \(days) days, more than 825")
        }
        self.violations = violations
    }

    /// Days between `notBefore` and `notAfter`, from openssl's dates (`Nov 26 15:14:45 2026 GMT`;
    /// a day below 10 is padded with a space).
    private static func validityDays(_ dates: String) -> Int? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        var found: [String: Date] = [:]
        for line in dates.split(separator: "\n") {
            let pair = line.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let value = pair[1].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            found[String(pair[0])] = formatter.date(from: value)
        }
        guard let start = found["notBefore"], let end = found["notAfter"] else { return nil }
        return Int((end.timeIntervalSince(start) / 86_400).rounded())
    }

    private static func openssl(_ arguments: [String]) throws -> String {
        let finished = try ChildProcess("openssl", arguments, stdout: .capture).finish()
        guard finished.status == 0 else {
            throw Subprocess.Failure(description: "openssl \(arguments.joined(separator: " ")) exited \(finished.status)")
        }
        return String(decoding: finished.stdout, as: UTF8.self)
    }
}
