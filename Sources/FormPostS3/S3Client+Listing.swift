import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// Listing a bucket's keys (`ListObjectsV2`) and multipart uploads (`ListMultipartUploads`).
extension S3Client {
    /// Every object whose key begins with `prefix` (and, with a `delimiter`, has none past
    /// it: the keys it groups are not listed), a page of up to 1,000 at a time.
    func list(prefix: String, delimiter: String? = nil) async throws -> [ListedObject] {
        var listed: [ListedObject] = []
        var token: String?
        repeat {
            var query: [SignatureV4.Field] = [("list-type", "2"), ("prefix", prefix)]
            if let delimiter { query.append(("delimiter", delimiter)) }
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

    /// Every multipart upload in progress whose key begins with `prefix`, a page of up to
    /// 1,000 at a time.
    func listMultipartUploads(prefix: String, attempts: Int = S3Client.attempts, timeout: TimeAmount = .minutes(5)) async throws -> [ListedMultipartUpload] {
        var listed: [ListedMultipartUpload] = []
        var markers: (key: String, uploadID: String)?
        repeat {
            var query: [SignatureV4.Field] = [("uploads", ""), ("prefix", prefix)]
            if let markers { query += [("key-marker", markers.key), ("upload-id-marker", markers.uploadID)] }
            let answer = try await send(.GET, key: nil, query: query, what: "listing the multipart uploads of \(prefix)", attempts: attempts, timeout: timeout,
                                        maxAnswerBytes: 16 << 20)
            let body = answer.body
            for upload in S3XML.elements("Upload", in: body) {
                guard let key = S3XML.text(of: "Key", in: upload), let uploadID = S3XML.text(of: "UploadId", in: upload) else { continue }
                listed.append(ListedMultipartUpload(key: key, uploadID: uploadID, initiated: S3XML.text(of: "Initiated", in: upload).flatMap(Self.date)))
            }
            markers = nil
            if S3XML.text(of: "IsTruncated", in: body) == "true", let key = S3XML.text(of: "NextKeyMarker", in: body),
               let uploadID = S3XML.text(of: "NextUploadIdMarker", in: body) {
                markers = (key, uploadID)
            }
        } while markers != nil
        return listed
    }

    /// The date of a listing's `LastModified` (`2026-11-27T08:00:00.000Z`).
    private static func date(_ text: String) -> Date? {
        try? Date.ISO8601FormatStyle(includingFractionalSeconds: text.contains(".")).parse(text)
    }
}
