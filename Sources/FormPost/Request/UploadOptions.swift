/// How an upload is encoded, retried, limited and timed.
public struct UploadOptions: Sendable {
    /// Retries on connection failures before a response, and on 503/429 (off by default).
    public var retry: RetryPolicy = .none
    /// The most redirects followed; 0 returns the redirect response itself.
    public var maxRedirects: Int = 5
    /// Whether `Authorization`, `Cookie` and `Proxy-Authorization` follow a redirect to
    /// another origin (curl's `--location-trusted`); they never follow one from https to http.
    public var keepsCredentialsAcrossOrigins = false
    /// An upper bound on the body's sending rate in bytes per second, or nil.
    public var maxBytesPerSecond: Int64?
    /// The whole request's time limit (redirects and retries included), or nil.
    public var timeout: Duration?
    /// The largest response body read into memory.
    public var maxResponseBytes: Int = 64 << 20

    /// Creates options; every parameter defaults to the property's default.
    public init(retry: RetryPolicy = .none, maxRedirects: Int = 5, keepsCredentialsAcrossOrigins: Bool = false, maxBytesPerSecond: Int64? = nil,
                timeout: Duration? = nil, maxResponseBytes: Int = 64 << 20) {
        self.retry = retry
        self.maxRedirects = maxRedirects
        self.keepsCredentialsAcrossOrigins = keepsCredentialsAcrossOrigins
        self.maxBytesPerSecond = maxBytesPerSecond
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }
}

/// How a form is turned into the bytes that are sent.
public enum EncodingStrategy: Sendable, Equatable {
    /// Forms whose length is known and at most `threshold` bytes are encoded in memory;
    /// larger ones stream from the plan (no temporary file). The default, with 10 MB.
    case automatic(threshold: Int64)
    /// Always encode in memory first.
    case inMemory
    /// Always stream from the plan.
    case streaming
    /// Encode to a file under the temporary directory, upload from it, then remove it
    /// (on success, failure and cancellation alike) — Alamofire's behaviour above its threshold.
    case temporaryFile

    /// `.automatic(threshold: 10_000_000)`, as Alamofire's `encodingMemoryThreshold`.
    public static let `default` = EncodingStrategy.automatic(threshold: 10_000_000)
}
