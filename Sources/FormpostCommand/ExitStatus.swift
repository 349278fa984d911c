#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPost
import Multipart

/// curl's exit codes, where the meaning matches.
enum ExitStatus: Int32 {
    case ok = 0
    case failure = 1
    case usage = 2
    case malformedURL = 3
    case cannotResolve = 6
    case cannotConnect = 7
    case httpError = 22
    case writeError = 23
    case readError = 26
    case timedOut = 28
    case tlsHandshakeFailed = 35
    case sendError = 55
    case receiveError = 56
    case clientCertificateProblem = 58
    case untrustedCertificate = 60
    case caCertificateProblem = 77

    /// The exit code for `error`.
    static func forError(_ error: any Error) -> ExitStatus {
        switch error {
        case is UsageError: return .usage
        case is OutputFile.Failure: return .writeError
        case is MissingFileName: return .readError
        case let error as TargetURL.Failure: return error.status
        case let error as ConnectionOptions.CertificateFileError:
            return error.kind == .caCertificates ? .caCertificateProblem : .clientCertificateProblem
        case UploadError.tlsHandshakeFailed: return .tlsHandshakeFailed
        case UploadError.untrustedCertificate: return .untrustedCertificate
        case MultipartError.fileNotFound, MultipartError.notARegularFile, MultipartError.fileNotReadable,
             MultipartError.fileReadFailed, MultipartError.fileSizeChanged, MultipartError.fileReplaced:
            return .readError
        case MultipartError.invalidBoundary, MultipartError.invalidHeader: return .usage
        case UploadError.cannotResolve: return .cannotResolve
        case UploadError.cannotConnect: return .cannotConnect
        case UploadError.timedOut: return .timedOut
        case UploadError.invalidURL, UploadError.methodCannotCarryBody, UploadError.unsupportedConfiguration: return .usage
        case UploadError.transport: return .sendError
        // curl: "CONNECT tunnel failed" is a receive error.
        case UploadError.proxyRefused: return .receiveError
        case ResumableUploadError.fileChanged: return .readError
        case ResumableUploadError.protocolUnsupported, ResumableUploadError.unexpectedStatus, ResumableUploadError.uploadGone: return .httpError
        case ResumableUploadError.retriesExhausted: return .sendError
        default: return .failure
        }
    }

    /// Ends the process with this status.
    func terminate() -> Never {
        exit(rawValue)
    }
}
