#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// tus's `Upload-Metadata`: comma-separated pairs of a key and a base64 value.
package enum TusMetadata {
    /// The pairs of `header`; nil when it is not well formed (a key with spaces, a value
    /// that is not base64).
    package static func parse(_ header: String) -> [String: String]? {
        var values: [String: String] = [:]
        for pair in header.split(separator: ",", omittingEmptySubsequences: true) {
            let items = pair.split(separator: " ", omittingEmptySubsequences: true)
            guard let key = items.first, items.count <= 2, !key.isEmpty else { return nil }
            if items.count == 2 {
                guard let data = Data(base64Encoded: String(items[1])) else { return nil }
                values[String(key)] = String(decoding: data, as: UTF8.self)
            } else {
                values[String(key)] = ""
            }
        }
        return values
    }

    /// The pairs of `header`, or none when it is not well formed.
    package static func decode(_ header: String) -> [String: String] { parse(header) ?? [:] }

    /// `values` as a header value, keys sorted.
    package static func encode(_ values: [String: String]) -> String {
        values.sorted { $0.key < $1.key }
            .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
    }
}
