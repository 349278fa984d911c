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
