#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The URL argument read as curl reads it: without a scheme it is `http://`; a scheme other
/// than http or https is curl's exit 1, a URL that cannot be parsed its exit 3.
enum TargetURL {
    /// Why the URL cannot be used, with curl's exit code.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        let status: ExitStatus
    }

    static func parse(_ text: String) throws -> URL {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), let host = url.host, !host.isEmpty else {
            throw Failure(description: "URL rejected: \(text) is not a well-formed URL", status: .malformedURL)
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw Failure(description: "Protocol \"\(url.scheme ?? "")\" not supported (formpost speaks http and https)", status: .failure)
        }
        return url
    }
}
