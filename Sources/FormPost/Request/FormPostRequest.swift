#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request as the client sends it: multipart uploads, parameter requests and raw
/// bodies alike, so retries, redirects and progress behave the same for all of them.
/// ``RequestSerializer`` builds them; ``FormPostClient/send(_:options:progress:)`` sends them.
public struct FormPostRequest: Sendable {
    /// The URL, with any query parameters already in it.
    public var url: URL
    /// The method.
    public var method: RequestMethod
    /// Header fields, in order. `Content-Type` comes from ``body`` and `Content-Length`
    /// from its plan; neither needs to be here.
    public var headers: HTTPFields
    /// The body, if any.
    public var body: RequestBody?

    /// Creates a request.
    public init(url: URL, method: RequestMethod = .get, headers: HTTPFields = [:], body: RequestBody? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}
