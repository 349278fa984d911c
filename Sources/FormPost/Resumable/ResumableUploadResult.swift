#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A completed resumable upload.
public struct ResumableUploadResult: Sendable {
    /// The upload's URL on the server.
    public let uploadURL: URL
    /// The offset this run resumed from (0 for a new upload).
    public let resumedFrom: Int64
    /// Bytes this run sent that the server acknowledged.
    public let bytesSent: Int64
    /// The server's last answer (to the append that completed the upload, or to the
    /// `HEAD` that found it complete).
    public let response: UploadResponse
    /// The state store's entry, kept until ``TusUploader/forget(_:)`` or
    /// ``ResumableUploader/forget(_:)`` when the uploader does not forget completed uploads.
    let entry: ResumeEntry?
}
