import Foundation
import Multipart

/// What is kept of a tus upload besides its bytes: its declared length, the client's
/// metadata, when it began, and once complete the stored file. Saved as JSON beside the
/// upload's data, so that an upload survives a restart of the server.
struct TusUploadInfo: Codable, Equatable {
    /// `Upload-Length`: the size of the whole upload.
    var length: Int64
    /// `Upload-Metadata` as the client sent it.
    var metadata: String?
    /// When the upload was created, in seconds since 1970.
    var created: Double
    /// The stored file, once every byte has arrived.
    var file: Receipt.File?

    /// The decoded metadata: keys, and values decoded from base64 (empty when absent).
    var metadataValues: [String: String] { TusMetadata.decode(metadata ?? "") }
}

/// tus's `Upload-Metadata`: comma-separated pairs of a key and a base64 value.
enum TusMetadata {
    /// The pairs of `header`; nil when it is not well formed (a key with spaces, a value
    /// that is not base64).
    static func parse(_ header: String) -> [String: String]? {
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
    static func decode(_ header: String) -> [String: String] { parse(header) ?? [:] }
}
