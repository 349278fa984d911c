#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// A file to upload resumably: its absolute path, its body, and what identifies it between
/// runs (size and modification time).
struct ResumableFile {
    let path: String
    let body: RequestBody
    let modified: Double

    /// The file at `path` (made absolute), checked and measured now.
    init(path: String, contentType: String? = nil) throws {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
        body = try RequestBody.file(path: self.path, contentType: contentType)
        modified = ((try? FileManager.default.attributesOfItem(atPath: self.path))?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
    }

    /// The file's name, its path's last component.
    var name: String { path.split(separator: "/").last.map(String.init) ?? path }

    /// The state store's entry of an upload of the file to `endpoint`.
    func entry(endpoint: URL, protocolName: String) -> ResumeEntry {
        ResumeEntry(uploadURL: "", path: path, size: body.contentLength ?? 0, modified: modified, endpoint: endpoint.absoluteString, protocolName: protocolName)
    }
}
