import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// An HTTP service that takes ``UploadEvent``s, as `formpost serve --hook-events post-finish`
/// posts them to `--hook-url`: each event is `POST`ed to ``url`` as its JSON
/// (`Content-Type: application/json`); any 2xx answer within ``timeout`` takes it, anything
/// else (another status, no answer, no connection) does not, and it is posted again later.
public struct UploadEventHook: Sendable {
    /// Where events are posted.
    public let url: String
    /// How long the service has to answer, from connecting to the last byte of its answer.
    public let timeout: Duration
    /// The client that posts: AsyncHTTPClient's shared one unless given.
    public let client: HTTPClient

    /// Creates a hook posting to `url` (`http` or `https`) with `client`, answered within `timeout`.
    public init(url: String, timeout: Duration = .seconds(5), client: HTTPClient = .shared) {
        self.url = url
        self.timeout = timeout
        self.client = client
    }

    /// Posts `event`; returns once the service took it.
    ///
    /// - Throws: ``UploadEventHookError`` when it did not.
    @Sendable public func deliver(_ event: UploadEvent) async throws {
        do {
            try await post(event)
            ReceiverMetrics.hookCall(event.type, "delivered")
        } catch {
            ReceiverMetrics.hookCall(event.type, "failed")
            throw error
        }
    }

    private func post(_ event: UploadEvent) async throws {
        var post = HTTPClientRequest(url: url)
        post.method = .POST
        post.headers.add(name: "Content-Type", value: "application/json")
        post.body = .bytes(ByteBuffer(bytes: UploadReceiver.encodeJSON(event)))
        let (seconds, attoseconds) = timeout.components
        let deadline = NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let status: UInt
        do {
            let response = try await client.execute(post, deadline: deadline)
            _ = try await response.body.collect(upTo: UploadAuthorizationHook.maxAnswerBytes)
            status = response.status.code
        } catch {
            throw UploadEventHookError.noAnswer(url: url, cause: "\(error)")
        }
        guard (200..<300).contains(status) else { throw UploadEventHookError.refused(url: url, status: Int(status)) }
    }
}
