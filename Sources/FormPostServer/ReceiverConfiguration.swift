import Multipart

/// Where a receiver stores files and what it accepts.
public struct ReceiverConfiguration: Sendable {
    /// The directory files are stored in; created if missing.
    public var directory: String
    /// The largest request body, in bytes.
    public var maxBodySize: Int64
    /// The largest file part, in bytes.
    public var maxFileSize: Int64
    /// The most parts in a form.
    public var maxParts: Int
    /// The largest text field kept in memory, in bytes.
    public var maxFieldSize: Int64
    /// The most bytes of all text fields of one request together (they are kept in memory
    /// and echoed in the receipt).
    public var maxTotalFieldBytes: Int64
    /// The permissions of stored files (their partial files are always 0600).
    public var storedFileMode: UInt16
    /// The most resumable uploads in progress at once, per protocol (tus, the IETF draft):
    /// each holds disk space until it completes or expires, so a client that creates
    /// them without end gets 503 past this.
    public var maxUploadsInProgress: Int

    /// Creates a configuration; by default 10 GiB bodies and files, 1000 parts, 1 MiB per
    /// field and 4 MiB of fields in all, stored files readable by their owner only (0600),
    /// 1000 resumable uploads in progress.
    public init(directory: String, maxBodySize: Int64 = 10 << 30, maxFileSize: Int64 = 10 << 30, maxParts: Int = 1000, maxFieldSize: Int64 = 1 << 20,
                maxTotalFieldBytes: Int64 = 4 << 20, storedFileMode: UInt16 = 0o600, maxUploadsInProgress: Int = 1000) {
        self.directory = directory
        self.maxBodySize = maxBodySize
        self.maxFileSize = maxFileSize
        self.maxParts = maxParts
        self.maxFieldSize = maxFieldSize
        self.maxTotalFieldBytes = maxTotalFieldBytes
        self.storedFileMode = storedFileMode
        self.maxUploadsInProgress = maxUploadsInProgress
    }

    var parserLimits: MultipartParserLimits {
        MultipartParserLimits(maxParts: maxParts, maxPartBytes: max(maxFileSize, maxFieldSize), maxTotalBytes: maxBodySize)
    }
}
