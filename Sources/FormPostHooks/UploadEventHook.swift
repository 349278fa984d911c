import FormPostReceiving
import AsyncHTTPClient

/// An HTTP service that takes `UploadEvent`s, as `formpost serve --hook-events post-finish`
/// posts them to `--hook-url`: each event is `POST`ed to ``url`` as its JSON
/// (`Content-Type: application/json`); a `2xx` answer, read to its last byte within
/// ``timeout``, takes it; anything else — another status (a `3xx` too: redirects are never
/// followed), no complete answer in time, no connection — does not, and it is posted again
/// later. The URL's `user:password@`, if any, is sent as `Authorization: Basic` and never
/// logged.
public struct UploadEventHook: Sendable {
    /// Where events are posted.
    public let url: String
    /// How long the whole exchange may take: connecting, sending, and the answer to its last byte.
    public let timeout: Duration
    /// The client that posts: by default one of the hooks' own that follows no redirect,
    /// made once per process and never shut down (see ``UploadAuthorizationHook/client``).
    public let client: HTTPClient

    /// Creates a hook posting to `url` (`http` or `https`) with `client` (nil: the hooks'
    /// own, which follows no redirect), answered within `timeout`.
    public init(url: String, timeout: Duration = .seconds(5), client: HTTPClient? = nil) {
        self.url = url
        self.timeout = timeout
        self.client = client ?? HookExchange.client
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
        let hook = HookURL(url)
        let answer: HookExchange.Answer
        do {
            answer = try await HookExchange(url: hook, timeout: timeout, client: client).post(UploadReceiver.encodeJSON(event))
        } catch {
            throw UploadEventHookError.noAnswer(url: hook.redacted, cause: "\(error)")
        }
        guard (200..<300).contains(answer.status) else { throw UploadEventHookError.refused(url: hook.redacted, status: answer.status) }
    }
}
