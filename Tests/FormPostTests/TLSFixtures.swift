import Foundation

/// Certificates made by openssl for one test, in a temporary directory: a CA, and server
/// certificates signed by it — for `localhost` and `127.0.0.1` (valid), expired, and for
/// another host name — plus one for `localhost` signed by a CA nobody trusts (all with one
/// key), and a client certificate signed by the CA. Nothing touches the system's trust store.
///
/// Server certificates meet what Apple's `SecTrust` asks of a private CA's certificates
/// (which Network.framework evaluates when custom roots are given): names in
/// `subjectAltName`, `extendedKeyUsage=serverAuth`, at most 825 days — so the same tests can
/// run on macOS. `AppleServerCertificateRules` checks them.
final class TLSFixtures: Sendable {
    let directory: String
    /// The trusted CA's certificate (what `--cacert` names).
    var caPath: String { directory + "/ca.pem" }
    /// The servers' private key.
    var keyPath: String { directory + "/server.key" }
    /// A valid certificate for `localhost` and `127.0.0.1`.
    var certificatePath: String { directory + "/server.pem" }
    /// The same names, expired yesterday.
    var expiredCertificatePath: String { directory + "/expired.pem" }
    /// A valid certificate for `elsewhere.invalid` only.
    var wrongHostCertificatePath: String { directory + "/wrong-host.pem" }
    /// A certificate for `localhost` signed by another CA.
    var untrustedCertificatePath: String { directory + "/untrusted.pem" }
    /// A client certificate signed by the CA, and its key.
    var clientCertificatePath: String { directory + "/client.pem" }
    var clientKeyPath: String { directory + "/client.key" }

    init() throws {
        directory = NSTemporaryDirectory() + "formpost-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=FormPost Test CA"])
        try openssl(["req", "-x509"] + ec + ["-keyout", "other-ca.key", "-out", "other-ca.pem", "-days", "2", "-subj", "/CN=Untrusted Test CA"])
        try openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
        try sign(names: "DNS:localhost,IP:127.0.0.1", days: "2", ca: "ca", output: "server.pem")
        try sign(names: "DNS:localhost,IP:127.0.0.1", days: "-1", ca: "ca", output: "expired.pem")
        try sign(names: "DNS:elsewhere.invalid", days: "2", ca: "ca", output: "wrong-host.pem")
        try sign(names: "DNS:localhost,IP:127.0.0.1", days: "2", ca: "other-ca", output: "untrusted.pem")
        try openssl(["req"] + ec + ["-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=formpost test client"])
        try "extendedKeyUsage=clientAuth\n".write(toFile: directory + "/client.cnf", atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", "client.pem", "-days", "2", "-extfile", "client.cnf"])
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    private func sign(names: String, days: String, ca: String, output: String) throws {
        let extensions = output + ".cnf"
        try "subjectAltName=\(names)\nextendedKeyUsage=serverAuth\n".write(toFile: directory + "/" + extensions, atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial",
                     "-out", output, "-days", days, "-extfile", extensions])
    }

    private func openssl(_ arguments: [String]) throws {
        let finished = try ChildProcess("openssl", arguments, stdout: .discard, directory: directory).finish()
        guard finished.status == 0 else {
            throw Subprocess.Failure(description: "openssl \(arguments.joined(separator: " ")) exited \(finished.status): \(String(decoding: finished.stderr, as: UTF8.self))")
        }
    }
}
