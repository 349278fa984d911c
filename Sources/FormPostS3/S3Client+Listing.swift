import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Listing a bucket's keys (`ListObjectsV2`).
extension S3Client {
    /// Every object whose key begins with `prefix`, a page of up to 1,000 at a time.
    func list(prefix: String) async throws -> [ListedObject] {
        var listed: [ListedObject] = []
        var token: String?
        repeat {
            var query: [SignatureV4.Field] = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let answer = try await send(.GET, key: nil, query: query, what: "listing \(prefix)", maxAnswerBytes: 16 << 20)
            let body = answer.body
            for contents in S3XML.elements("Contents", in: body) {
                guard let key = S3XML.text(of: "Key", in: contents) else { continue }
                let modified = S3XML.text(of: "LastModified", in: contents).flatMap(Self.date)
                listed.append(ListedObject(key: key, lastModified: modified))
            }
            token = S3XML.text(of: "IsTruncated", in: body) == "true" ? S3XML.text(of: "NextContinuationToken", in: body) : nil
        } while token != nil
        return listed
    }

    /// The date of a listing's `LastModified` (`2026-11-27T08:00:00.000Z`).
    private static func date(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle(includingFractionalSeconds: text.contains(".")).parse(text)
    }
}
