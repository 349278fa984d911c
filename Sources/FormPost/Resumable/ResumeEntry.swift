#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What is kept between runs of a resumable upload: where it goes on, and what it was.
public struct ResumeEntry: Codable, Equatable, Sendable {
    /// The upload's URL on the server.
    public var uploadURL: String
    /// The file's absolute path; for a form, `form:` and the SHA-256 of its parts (text,
    /// and each file's path, size and identity).
    public var path: String
    /// The file's (or the form's body's) size when the upload began.
    public var size: Int64
    /// The file's modification time when the upload began, in seconds since 1970 (0 for a form).
    public var modified: Double
    /// The endpoint the upload was created at.
    public var endpoint: String
    /// The protocol: `tus` or `ietf`.
    public var protocolName: String
    /// A form's boundary, so that the run that resumes it produces the same bytes.
    public var boundary: String?

    /// Creates an entry.
    public init(uploadURL: String, path: String, size: Int64, modified: Double, endpoint: String, protocolName: String, boundary: String? = nil) {
        self.uploadURL = uploadURL
        self.path = path
        self.size = size
        self.modified = modified
        self.endpoint = endpoint
        self.protocolName = protocolName
        self.boundary = boundary
    }

    /// The key the entry is kept under: everything that must be equal for an upload to go on.
    var fingerprint: String { [protocolName, path, String(size), String(modified), endpoint].joined(separator: "\n") }
}
