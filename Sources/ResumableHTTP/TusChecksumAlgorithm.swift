#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// tus's checksum extension: an append carries `Upload-Checksum: ALGORITHM BASE64` of its
/// content; the server appends nothing of it unless the content matches (460 otherwise).
package enum TusChecksumAlgorithm: String, CaseIterable, Sendable {
    case sha256
    case sha1

    /// The algorithms a `Tus-Checksum-Algorithm` value lists that are known here,
    /// strongest first.
    package static func offered(_ field: String?) -> [TusChecksumAlgorithm] {
        let names = Set((field ?? "").split(separator: ",").map { $0.trimmingOptionalWhitespace().lowercased() })
        return allCases.filter { names.contains($0.rawValue) }
    }

    /// The algorithm and the expected digest of an `Upload-Checksum` value; nil when it
    /// is not `ALGORITHM BASE64`. The algorithm may be one not known here (its name is kept).
    package static func parseField(_ field: String) -> (name: String, digestBase64: String)? {
        let items = field.split(separator: " ", omittingEmptySubsequences: true)
        guard items.count == 2 else { return nil }
        return (items[0].lowercased(), String(items[1]))
    }
}
