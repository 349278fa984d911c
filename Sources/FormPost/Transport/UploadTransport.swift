#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends one HTTP request and returns its response. Redirects, retries and encoding
/// strategies are the client's; a transport only performs the exchange.
public protocol UploadTransport: Sendable {
    /// Sends `request`, counting body bytes into `request.progress`.
    func send(_ request: TransportRequest) async throws -> UploadResponse
}

/// One exchange for a transport to perform.
public struct TransportRequest: Sendable {
    /// The URL.
    public var url: URL
    /// The method.
    public var method: RequestMethod
    /// Header fields to send, besides `Content-Type` and `Content-Length`.
    public var headers: HTTPFields
    /// The body, if any.
    public var body: RequestBody?
    /// Where body bytes are counted.
    public var progress: ProgressReporter
    /// An upper bound on the sending rate, if any.
    public var maxBytesPerSecond: Int64?
    /// The exchange's time limit, if any: it runs from when the request goes to the
    /// connection, not while it waits for one that uploads before it hold.
    public var timeout: Duration?
    /// The largest response body read.
    public var maxResponseBytes: Int
    /// Whether a failure on a possibly reused connection before any answer is thrown as
    /// ``ConnectionClosedBeforeAnswer`` (which ``FormPostClient`` answers by sending again)
    /// rather than as the error itself.
    var marksClosedBeforeAnswer = false
}
