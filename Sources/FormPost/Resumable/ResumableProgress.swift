/// Where a resumable upload stands.
public struct ResumableProgress: Sendable, Equatable {
    /// Bytes the server has acknowledged (its offset).
    public var acknowledged: Int64
    /// Bytes sent so far: the acknowledged ones and those of the request under way.
    public var sent: Int64
    /// The upload's size.
    public var total: Int64
    /// The offset this run resumed from (0 for a new upload).
    public var resumedFrom: Int64
}
