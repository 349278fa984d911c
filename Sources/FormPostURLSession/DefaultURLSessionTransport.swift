import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FormPost

extension URLSessionTransport {
    /// A process-wide transport on `URLSessionConfiguration.default`, never invalidated: what
    /// `FormPostClient()` uses on watchOS.
    public static let shared = URLSessionTransport()
}

#if os(watchOS)
extension FormPostClient {
    /// Creates a client on ``URLSessionTransport/shared``: the default on watchOS, where an
    /// ordinary app has no Network.framework or BSD-socket networking — which AsyncHTTPClient
    /// uses — only URLSession (Apple TN3135).
    public init(requestSerializer: RequestSerializer = RequestSerializer()) {
        self.init(transport: URLSessionTransport.shared, requestSerializer: requestSerializer)
    }
}
#endif
