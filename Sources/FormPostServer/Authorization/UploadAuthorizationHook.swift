import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1

/// An HTTP service that decides, for ``UploadServer/authorize``, whether each upload may
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
/// answers: any 2xx allows the upload — with a JSON body `{"maxBytes": 1048576,
/// "metadata": {"user": "42"}}` (either key optional) it allows it with that
/// ``UploadGrant``, and a JSON body that is no such grant counts as no answer; a 4xx refuses it with that status and the message
/// of its JSON body's `"error"` string (else a general one); anything else, no answer
/// within ``timeout``, or no connection is ``UploadAuthorization/unavailable(cause:)``.
public struct UploadAuthorizationHook: Sendable {
    /// Where the JSON about each upload is posted.
    public let url: String
    /// How long the service has to answer, from connecting to the last byte of its answer.
    public let timeout: Duration
    /// The client that asks the service: AsyncHTTPClient's shared one unless given.
    public let client: HTTPClient

    /// The most bytes of the service's answer that are read.
    static let maxAnswerBytes = 64 << 10

    /// Creates a hook posting to `url` (`http` or `https`) with `client`, answered within
    /// `timeout`.
    public init(url: String, timeout: Duration = .seconds(5), client: HTTPClient = .shared) {
        self.url = url
        self.timeout = timeout
        self.client = client
    }

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
        var post = HTTPClientRequest(url: url)
        post.method = .POST
        post.headers.add(name: "Content-Type", value: "application/json")
        let body: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            body = try encoder.encode(HookRequestBody(request))
        } catch {
            return .unavailable(cause: "the hook's request could not be encoded: \(error)")
        }
        post.body = .bytes(ByteBuffer(bytes: body))
        let (seconds, attoseconds) = timeout.components
        let deadline = NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        do {
            let response = try await client.execute(post, deadline: deadline)
            let answer = try await response.body.collect(upTo: Self.maxAnswerBytes)
            switch response.status.code {
            case 200..<300:
                guard let decided = HookGrantAnswer.authorization(of: Array(answer.readableBytesView)) else {
                    return .unavailable(cause: "the hook at \(url) answered \(response.status.code) with a JSON body that is no grant (expected {\"maxBytes\": bytes, \"metadata\": {\"key\": \"text\"}})")
                }
                return decided
            case 400..<500:
                let message = (try? JSONDecoder().decode(ErrorBody.self, from: Data(answer.readableBytesView)))?.error
                return .deny(status: HTTPResponse.Status(code: Int(response.status.code)), message: message ?? "The upload was not authorized.")
            default:
                return .unavailable(cause: "the hook at \(url) answered \(response.status.code)")
            }
        } catch {
            return .unavailable(cause: "the hook at \(url) gave no answer: \(error)")
        }
    }
}
