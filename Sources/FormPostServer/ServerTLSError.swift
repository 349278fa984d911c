/// Why PEM files cannot serve as the server's TLS identity.
public enum ServerTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is missing or holds no PEM certificate.
    case unreadableCertificate(path: String)
    /// The file is missing or holds no PEM private key (encrypted keys are not supported).
    case unreadablePrivateKey(path: String)
    /// The key does not belong to the chain's first certificate.
    case keyDoesNotMatch(certificatePath: String, keyPath: String)

    public var description: String {
        switch self {
        case .unreadableCertificate(let path):
            return "\(path) holds no readable PEM certificate."
        case .unreadablePrivateKey(let path):
            return "\(path) holds no readable PEM private key (an unencrypted key is needed)."
        case .keyDoesNotMatch(let certificate, let key):
            return "The private key in \(key) does not belong to the certificate in \(certificate)."
        }
    }
}
