import NIOSSL

/// A failed TLS handshake as NIOSSL reports it, read for its cause: a certificate that
/// BoringSSL refused (untrusted issuer, expired, not yet valid), or anything else.
struct TLSFailure {
    let error: NIOSSLError

    init(_ error: NIOSSLError) {
        self.error = error
    }

    /// BoringSSL's reasons, as its error stack words them (`CERTIFICATE_VERIFY_FAILED`, …).
    var reasons: [String] {
        guard case .handshakeFailed(let failure) = error else { return [] }
        switch failure {
        case .sslError(let stack), .unknownError(let stack):
            return stack.map { String(describing: $0) }
        default:
            return [String(describing: failure)]
        }
    }

    /// Whether the server's certificate was what failed.
    var isCertificateRejected: Bool {
        reasons.contains { $0.contains("CERTIFICATE_VERIFY_FAILED") }
    }

    /// The matching ``UploadError``.
    func uploadError(host: String) -> UploadError {
        if isCertificateRejected {
            return .untrustedCertificate(host: host, reason: "its chain does not lead to a trusted CA, or a certificate in it has expired or is not yet valid")
        }
        guard case .handshakeFailed = error else { return .transport("TLS: \(error)") }
        return .tlsHandshakeFailed(host: host, reason: reasons.joined(separator: "; "))
    }
}
