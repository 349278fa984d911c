import ArgumentParser
import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOSSL

/// How the command connects, with curl's options and meanings: trust (`--cacert`, `-k`),
/// a client certificate (`--cert`, `--key`), the HTTP version (`--http1.1`, `--http2`),
/// a proxy (`-x`) and the connect timeout.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("cacert"), help: "Trust the CA certificates in this PEM file instead of the system's.")
    var caCertificates: String?
    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Do not verify the server's certificate (nor its host name).")
    var insecure = false
    @Option(name: [.customShort("E"), .customLong("cert")], help: "A client certificate chain (PEM) to present; its key comes from --key or the same file.")
    var certificate: String?
    @Option(name: .customLong("key"), help: "The private key (PEM) of --cert.")
    var key: String?
    @Flag(name: .customLong("http1.1"), help: "Use HTTP/1.1 only.")
    var http1Only = false
    @Flag(name: .customLong("http2"), help: "Use HTTP/2 where the server offers it by ALPN (the default over HTTPS).")
    var http2 = false
    @Option(name: [.customShort("x"), .customLong("proxy")], help: "Send through this proxy: [http://][user:password@]host[:port] or socks5://host[:port].")
    var proxy: String?
    @Option(name: .customLong("connect-timeout"), help: "The connection's time limit in seconds.")
    var connectTimeout: Double?

    /// The AsyncHTTPClient configuration these options describe.
    ///
    /// - Throws: ``ConnectionOptions/CertificateFileError`` (curl's exit 58 or 77) for a
    ///   file that cannot be read, `UsageError` for contradicting options.
    func makeConfiguration() throws -> HTTPClient.Configuration {
        guard !(http1Only && http2) else { throw UsageError("use only one of --http1.1 and --http2") }
        var configuration = HTTPClient.Configuration()
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .nanoseconds(Int64((connectTimeout ?? 10) * 1e9)))
        // As curl: a connection that fails is not tried again unless --retry says so.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        // As curl: a refused or unreachable server fails at once (exit 7); on Apple
        // platforms Network.framework would otherwise wait for connectivity until the timeout.
        configuration.networkFrameworkWaitForConnectivity = false
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caCertificates {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caCertificates))
            } catch {
                throw CertificateFileError(kind: .caCertificates, path: caCertificates)
            }
        }
        if insecure { tls.certificateVerification = .none }
        if let certificate {
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
            } catch {
                throw CertificateFileError(kind: .clientCertificate, path: certificate)
            }
            let keyPath = key ?? certificate
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyPath, format: .pem))
            } catch {
                throw CertificateFileError(kind: .privateKey, path: keyPath)
            }
        } else if key != nil {
            throw UsageError("--key needs --cert")
        }
        configuration.tlsConfiguration = tls
        if let proxy { configuration.proxy = try Self.proxy(proxy) }
        return configuration
    }

    /// AsyncHTTPClient's proxy for curl's `-x` syntax.
    static func proxy(_ text: String) throws -> HTTPClient.Configuration.Proxy {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty,
              let scheme = components.scheme?.lowercased() else {
            throw UsageError("-x \(text): expected [http://][user:password@]host[:port] or socks5://host[:port]")
        }
        switch scheme {
        case "http":
            // URLComponents' user and password are already percent-decoded.
            let authorization = components.user.map { HTTPClient.Authorization.basic(username: $0, password: components.password ?? "") }
            return .server(host: host, port: components.port ?? 1080, authorization: authorization)
        case "socks5", "socks5h":
            return .socksServer(host: host, port: components.port ?? 1080)
        default:
            throw UsageError("-x \(text): the proxy scheme \(scheme) is not supported (http or socks5)")
        }
    }

    /// A certificate or key file that cannot be used.
    struct CertificateFileError: Error, CustomStringConvertible {
        /// Which file it was.
        enum Kind { case caCertificates, clientCertificate, privateKey }
        let kind: Kind
        let path: String

        var description: String {
            switch kind {
            case .caCertificates: return "error setting certificate file: \(path) holds no readable PEM certificate"
            case .clientCertificate: return "could not load the client certificate \(path): expected a PEM certificate chain"
            case .privateKey: return "could not load the private key \(path): expected a PEM private key"
            }
        }
    }
}
