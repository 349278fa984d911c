/// Bounds on what the parser accepts; crossing one is ``MultipartError/limitExceeded(limit:value:)``.
public struct MultipartParserLimits: Equatable, Sendable {
    /// The largest header block of one part, in bytes. Default 16 KiB.
    public var maxHeaderBytes: Int
    /// The most parts in a form. Default 1000.
    public var maxParts: Int
    /// The largest content of one part, in bytes; nil for no limit (the default).
    public var maxPartBytes: Int64?
    /// The largest whole body, in bytes; nil for no limit (the default).
    public var maxTotalBytes: Int64?
    /// The most bytes before the first delimiter (RFC 2046's preamble, which browsers and
    /// curl never send). A body without the delimiter so far in is not one with this
    /// boundary: ``MultipartError/malformedBody(reason:)``, without reading the rest. Default 16 KiB.
    public var maxPreambleBytes: Int

    /// Creates limits; the defaults are 16 KiB of headers per part, 1000 parts, no size
    /// limits, 16 KiB of preamble.
    public init(maxHeaderBytes: Int = 16 * 1024, maxParts: Int = 1000, maxPartBytes: Int64? = nil, maxTotalBytes: Int64? = nil,
                maxPreambleBytes: Int = 16 * 1024) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxParts = maxParts
        self.maxPartBytes = maxPartBytes
        self.maxTotalBytes = maxTotalBytes
        self.maxPreambleBytes = maxPreambleBytes
    }
}
