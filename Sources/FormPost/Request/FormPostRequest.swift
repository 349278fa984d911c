import Foundation

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
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: RequestBody?

    /// Creates a request.
    public init(url: URL, method: RequestMethod = .get, headers: [(name: String, value: String)] = [], body: RequestBody? = nil) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }

    /// The first header field named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.value(of: name)
    }

    /// Replaces every field named `name` (case-insensitive) with one of `value`, or removes them for nil.
    public mutating func setHeader(_ name: String, to value: String?) {
        headers.setField(name, to: value)
    }
}
