/// How much of a request body has been handed to the connection.
public struct UploadProgress: Equatable, Sendable {
    /// Bytes sent so far.
    public let bytesSent: Int64
    /// The body's length, when known.
    public let totalBytes: Int64?

    /// `bytesSent / totalBytes`, when the total is known (1 for an empty body).
    public var fraction: Double? {
        guard let totalBytes else { return nil }
        return totalBytes == 0 ? 1 : Double(bytesSent) / Double(totalBytes)
    }

    /// Creates a progress value.
    public init(bytesSent: Int64, totalBytes: Int64?) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
    }
}
