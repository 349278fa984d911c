import Foundation

/// What is kept between runs of a resumable upload: where it goes on, and what it was.
public struct ResumeEntry: Codable, Equatable, Sendable {
    /// The upload's URL on the server.
    public var uploadURL: String
    /// The file's absolute path.
    public var path: String
    /// The file's size when the upload began.
    public var size: Int64
    /// The file's modification time when the upload began, in seconds since 1970.
    public var modified: Double
    /// The endpoint the upload was created at.
    public var endpoint: String
    /// The protocol: `tus`.
    public var protocolName: String

    /// The key the entry is kept under: everything that must be equal for an upload to go on.
    var fingerprint: String { [protocolName, path, String(size), String(modified), endpoint].joined(separator: "\n") }
}
