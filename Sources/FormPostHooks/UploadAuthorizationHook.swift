import FormPostReceiving
import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// An HTTP service that decides, for `UploadServer/authorize`, whether each upload may
/// begin, as `formpost serve --hook-url` asks it: the server `POST`s JSON about the request
/// to ``url`` —
///
/// ```json
/// {"type":"pre-create","upload":{"protocol":"multipart","method":"POST","path":"/upload","query":"","client":"127.0.0.1","headers":{"authorization":["Bearer good"]}}}
/// ```
///
/// (`protocol` `multipart`, `tus` or `ietf`; `query` without `?`, empty when there is
/// none; `client` the client's address, or null; `headers` every header field of the
/// request, names lowercased, each with its values in the order sent) — and the service
/// answers with an explicit verdict. It fails closed: only a verdict that allows lets the
/// upload through.
///
/// - A `2xx` whose body is a JSON object of these keys only:
///   `{"allow": true}` allows the upload — with `"maxBytes": 1048576` and/or
///   `"metadata": {"user": "42"}` beside it, with that `UploadGrant`;
///   `{"allow": false, "status": 403, "message": "…"}` refuses it with that status (400–499,
///   403 when absent) and message (both optional). For compatibility, an object with
///   `maxBytes` or `metadata` and no `allow` allows with that grant.
/// - A `4xx` refuses the upload with that status and the message of its JSON body's
///   `"error"` string (else a general one).
/// - Anything else is no verdict, and the upload is refused as
///   `UploadAuthorization/unavailable(cause:)` (`503` with `Retry-After`, nothing stored,
///   the cause logged at error level): a `2xx` whose body is empty, not JSON (an HTML
///   page), another JSON shape, or an object with a key not listed above or of the wrong
///   type; a `3xx` (redirects are never followed: a sign-in page is no verdict); a `5xx`; an
///   answer not complete, to its last byte, within ``timeout``; no connection.
///
/// The URL's `user:password@`, if any, is sent as `Authorization: Basic` and never logged:
/// log lines and causes name the hook by its scheme, host, port and path only.
public struct UploadAuthorizationHook: Sendable {
    /// Where the JSON about each upload is posted.
    public let url: String
    /// How long the whole exchange may take: connecting, sending, and the answer to its last byte.
    public let timeout: Duration
    /// The client that asks the service: by default one of the hooks' own that follows no
    /// redirect, made once per process and never shut down. One given instead should be
    /// configured with `redirectConfiguration: .disallow`: an answer it reached through a
    /// redirect is no verdict all the same.
    public let client: HTTPClient

    /// Creates a hook posting to `url` (`http` or `https`) with `client` (nil: the hooks'
    /// own, which follows no redirect), answered within `timeout`.
    public init(url: String, timeout: Duration = .seconds(5), client: HTTPClient? = nil) {
        self.url = url
        self.timeout = timeout
        self.client = client ?? HookExchange.client
    }

    /// `url` as it may be logged or shown: scheme, host, port and path, without the
    /// `user:password@`, query or fragment that may hold a secret.
    public static func redacted(_ url: String) -> String { HookURL.redacted(url) }

    /// Asks the service about `request`.
    @Sendable public func authorize(_ request: UploadAuthorizationRequest) async -> UploadAuthorization {
        let decided = await ask(request)
        switch decided {
        case .allow, .allowWith: ReceiverMetrics.hookCall("pre-create", "allowed")
        case .deny: ReceiverMetrics.hookCall("pre-create", "denied")
        case .unavailable: ReceiverMetrics.hookCall("pre-create", "failed")
        }
        return decided
    }

    private func ask(_ request: UploadAuthorizationRequest) async -> UploadAuthorization {
        let hook = HookURL(url)
        let answer: HookExchange.Answer
        do {
            answer = try await HookExchange(url: hook, timeout: timeout, client: client).post(UploadReceiver.encodeJSON(HookRequestBody(request)))
        } catch {
            return .unavailable(cause: "the hook at \(hook.redacted) gave no answer: \(error)")
        }
        switch answer.status {
        case 200..<300:
            guard let decided = HookVerdict.authorization(of: answer.body) else {
                return .unavailable(cause: "the hook at \(hook.redacted) answered \(answer.status) with no verdict (expected a JSON object such as {\"allow\": true} or {\"allow\": false, \"message\": \"…\"}; the body began: \(Self.excerpt(of: answer.body)))")
            }
            return decided
        case 300..<400:
            return .unavailable(cause: "the hook at \(hook.redacted) answered \(answer.status), a redirect, which is not followed: a hook must answer with a verdict")
        case 400..<500:
            let message = (try? JSONDecoder().decode(ErrorBody.self, from: Data(answer.body)))?.error
            return .deny(status: HTTPResponse.Status(code: answer.status), message: message ?? HookVerdict.defaultRefusal)
        default:
            return .unavailable(cause: "the hook at \(hook.redacted) answered \(answer.status)")
        }
    }

    /// The first bytes of `body`, as text for a log line.
    private static func excerpt(of body: [UInt8]) -> String {
        guard !body.isEmpty else { return "(empty)" }
        let text = String(decoding: body.prefix(80), as: UTF8.self).map { $0.isNewline ? " " : $0 }
        return "\"" + String(text) + (body.count > 80 ? "…" : "") + "\""
    }
}
