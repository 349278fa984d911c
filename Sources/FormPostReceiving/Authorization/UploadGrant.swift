import HTTPTypes
import NIOCore

/// What an authorization that allows an upload may add to it
/// (``UploadAuthorization/allowWith(_:)``): a byte limit tighter than the receiver's, and
/// metadata of the application's own (who uploads, for what), which every event about the
/// upload carries (``UploadEvent/Upload/metadata``) — a tus upload's and an IETF-draft
/// upload's kept with it until it ends, across restarts. The client never sees the metadata.
public struct UploadGrant: Sendable, Equatable, Codable {
    /// The most bytes the upload may have: a multipart form's whole body, a resumable
    /// upload's declared length (which its creation must then declare); nil for the
    /// receiver's own limits. Past it the upload is answered 413 and nothing is stored.
    public var maxBytes: Int64?
    /// The application's metadata about the upload, carried by its events; empty for none.
    public var metadata: [String: String]

    /// A grant of at most `maxBytes` (nil: the receiver's limits) with `metadata`.
    public init(maxBytes: Int64? = nil, metadata: [String: String] = [:]) {
        self.maxBytes = maxBytes
        self.metadata = metadata
    }
}
