#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(Network)
import AsyncHTTPClient
import Network
#endif

/// A failure as Network.framework reports it through AsyncHTTPClient, reduced to the three
/// kinds it has (`NWError.posix`, `.dns`, `.tls`; AsyncHTTPClient rewraps the first and the
/// last as `HTTPClient.NWPOSIXError` and `HTTPClient.NWTLSError`), so that it maps to the
/// same ``UploadError`` — and the same curl exit code — as NIOPosix's errors do.
///
/// The mapping is plain data and is tested on every platform; only reading the framework's
/// error types (``init(_:)``) is Apple's.
enum NetworkFrameworkFailure: Equatable, Sendable {
    /// A POSIX error code (`ECONNREFUSED`, `ETIMEDOUT`, …), as the platform numbers it.
    case posix(Int32)
    /// A `DNSServiceErrorType` (`kDNSServiceErr_NoSuchRecord` = -65554, …).
    case dns(Int32)
    /// A Security framework `OSStatus` (`errSSLBadCert` = -9808, …).
    case tls(Int32)

    #if canImport(Network)
    /// The failure `error` carries, or nil when it is none of Network.framework's.
    init?(_ error: any Error) {
        switch error {
        case let error as HTTPClient.NWPOSIXError: self = .posix(error.errorCode.rawValue)
        case let error as HTTPClient.NWTLSError: self = .tls(error.status)
        case let error as NWError:
            switch error {
            case .posix(let code): self = .posix(code.rawValue)
            case .dns(let code): self = .dns(code)
            case .tls(let status): self = .tls(status)
            @unknown default: return nil
            }
        default: return nil
        }
    }
    #endif

    /// `OSStatus` values (Security's `SecureTransport.h` and `SecBase.h`) that say the
    /// server's certificate was refused, as curl's exit 60 does.
    static let certificateRefusals: Set<Int32> = [
        -9807, // errSSLXCertChainInvalid
        -9808, // errSSLBadCert
        -9812, // errSSLUnknownRootCert
        -9813, // errSSLNoRootCert
        -9814, // errSSLCertExpired
        -9815, // errSSLCertNotYetValid
        -9843, // errSSLHostNameMismatch
        -67843, // errSecNotTrusted
        -67818, // errSecCertificateExpired
        -67819, // errSecCertificateNotValidYet
        -67602, // errSecHostNameMismatch
    ]

    /// The matching ``UploadError``: a refused or unreachable connection is `cannotConnect`
    /// (exit 7), a failed name lookup `cannotResolve` (6), a timeout `timedOut` (28), a
    /// refused server certificate `untrustedCertificate` (60), any other TLS failure
    /// `tlsHandshakeFailed` (35), a cancelled connection `CancellationError`.
    func error(host: String, port: Int) -> any Error {
        switch self {
        case .posix(let code):
            switch code {
            case ECONNREFUSED, ECONNRESET, ECONNABORTED, EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN, EADDRNOTAVAIL:
                return UploadError.cannotConnect(host: host, port: port, reason: String(cString: strerror(code)))
            case ETIMEDOUT:
                return UploadError.timedOut("connecting to \(host) took too long")
            case ECANCELED:
                return CancellationError()
            default:
                return UploadError.transport(String(cString: strerror(code)))
            }
        case .dns(let code):
            return UploadError.cannotResolve(host: host, reason: "the name lookup failed (DNS service error \(code))")
        case .tls(let status) where Self.certificateRefusals.contains(status):
            return UploadError.untrustedCertificate(host: host, reason: "the system refused its certificate (OSStatus \(status))")
        case .tls(let status):
            return UploadError.tlsHandshakeFailed(host: host, reason: "OSStatus \(status)")
        }
    }
}
