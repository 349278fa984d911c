/// What a valid signed upload URL allows: its method and path until ``expires``, holding
/// at most ``maxBytes`` when there is a limit.
public struct SignedUploadGrant: Sendable, Equatable {
    /// The Unix time (seconds) the URL expires at.
    public let expires: Int64
    /// The most bytes the upload may hold, or nil when the signature sets no limit.
    public let maxBytes: Int64?

    /// A grant until `expires` of at most `maxBytes`.
    public init(expires: Int64, maxBytes: Int64?) {
        self.expires = expires
        self.maxBytes = maxBytes
    }
}
