import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostServer

/// `formpost sign --key-file F [--method POST] [--expires-in 3600] [--max-bytes 10M] URL`:
/// prints `URL` signed for `formpost serve --signing-key-file F` (``UploadURLSigner``).
struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign", abstract: "Print a signed upload URL for 'formpost serve --signing-key-file'.",
        discussion: """
        The key is the raw bytes of a file, at least 32 of them (head -c 32 /dev/urandom > key). The URL's method, path, expiry and limit are signed with HMAC-SHA256; the query parameters X-FormPost-Expires, X-FormPost-Max-Bytes and X-FormPost-Signature are appended to it.

        Example: formpost sign --key-file key --expires-in 600 --max-bytes 10M http://127.0.0.1:8080/upload
        """
    )

    @Option(name: .customLong("key-file"), help: "The file whose raw bytes are the key (at least 32).")
    var keyFile: String
    @Option(help: "The method the URL is for: POST for a form, a tus creation or a resumable upload (PUT for one of the IETF draft sent with PUT).")
    var method = "POST"
    @Option(name: .customLong("expires-in"), help: "Seconds from now until the URL is refused: at most 604800 (7 days).")
    var expiresIn: Int64 = 3600
    @Option(name: .customLong("max-bytes"), help: "The most bytes the upload may hold: bytes or K/M/G.")
    var maxBytes: String?
    @Argument(help: "The URL to sign (http://host:port/path), or its path alone.")
    var url: String

    func run() async throws {
        guard expiresIn > 0, expiresIn <= UploadURLSigner.maxLifetime else {
            throw fail(UsageError("--expires-in \(expiresIn): expected seconds between 1 and \(UploadURLSigner.maxLifetime) (7 days, the longest a signed URL lives)"))
        }
        guard !method.isEmpty, method.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }) else {
            throw fail(UsageError("--method \(method): expected a method such as POST or PUT"))
        }
        var limit: Int64?
        if let maxBytes {
            guard let bytes = ByteSize.parse(maxBytes) else { throw fail(UsageError("--max-bytes \(maxBytes): expected bytes or K/M/G")) }
            limit = bytes
        }
        let signer: UploadURLSigner
        do {
            signer = try UploadURLSigner(keyFile: keyFile)
        } catch {
            throw fail(UsageError("--key-file: \(error)"))
        }
        let (origin, target) = try Self.split(url)
        let expires = Int64(Date().timeIntervalSince1970) + expiresIn
        Descriptor.standardOutput.print(origin + signer.signedTarget(method: method, path: target, expires: expires, maxBytes: limit) + "\n")
    }

    /// `url` as its origin (`http://host:port`, empty for a path alone) and its target (the
    /// path and query; `/` when it has no path), without a fragment.
    static func split(_ url: String) throws -> (origin: String, target: String) {
        let unfragmented = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
        if unfragmented.hasPrefix("/") { return ("", unfragmented) }
        do {
            _ = try TargetURL.parse(unfragmented)
        } catch {
            throw fail(error)
        }
        let withScheme = unfragmented.contains("://") ? unfragmented : "http://" + unfragmented
        guard let schemeEnd = withScheme.firstRange(of: "://") else { throw fail(UsageError("\(url): expected a URL such as http://host:port/upload")) }
        let rest = withScheme[schemeEnd.upperBound...]
        guard let targetStart = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return (withScheme, "/") }
        let target = String(withScheme[targetStart...])
        return (String(withScheme[..<targetStart]), target.hasPrefix("?") ? "/" + target : target)
    }
}
