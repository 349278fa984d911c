import FormPostReceiving
import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOPosix

/// One `POST` of JSON to a hook (``UploadAuthorizationHook``, ``UploadEventHook``) and its
/// answer, read to the last byte within a timeout that covers the whole exchange —
/// connecting, sending, the answer's head and its body — so that a hook sending its body
/// slowly cannot hold the upload past it. Redirects are never followed: the hooks' own
/// client (``client``) is made not to, and an answer that came through a redirect all the
/// same (a client of the caller's that follows them) is a failure.
struct HookExchange: Sendable {
    /// The hook's URL.
    let url: HookURL
    /// How long the whole exchange may take.
    let timeout: Duration
    /// The client that posts.
    let client: HTTPClient

    /// The most bytes of a hook's answer that are read; a longer one is a failure.
    static let maxAnswerBytes = 64 << 10

    /// The client of the hooks unless one is given: AsyncHTTPClient's, on NIOPosix's shared
    /// event loops (the server's own: sockets on every platform, never Network.framework),
    /// configured to follow no redirect. It is made once per process, on first use, and
    /// lives as long as the process (like AsyncHTTPClient's shared client), so it is never
    /// shut down.
    static let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                                   configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    /// A hook's complete answer.
    struct Answer: Sendable {
        /// Its status code.
        let status: Int
        /// Its body, whole.
        let body: [UInt8]
    }

    /// Why no answer could be had.
    enum Failure: Error, CustomStringConvertible {
        /// The exchange was not over within the timeout.
        case timedOut(Duration)
        /// The client followed a redirect to reach the answer.
        case redirected
        /// The connection failed, or the answer could not be read (too long, cut off).
        case failed(String)

        var description: String {
            switch self {
            case .timedOut(let timeout): "no complete answer within \(timeout)"
            case .redirected: "its answer came through a redirect, which a hook must not give (hooks follow none)"
            case .failed(let cause): cause
            }
        }
    }

    /// Posts `body` as `application/json`; the complete answer.
    ///
    /// - Throws: ``Failure`` when there is none in time.
    func post(_ body: Data) async throws(Failure) -> Answer {
        var post = HTTPClientRequest(url: url.target)
        post.method = .POST
        post.headers.add(name: "Content-Type", value: "application/json")
        if let credentials = url.credentials { post.setBasicAuth(username: credentials.user, password: credentials.password) }
        post.body = .bytes(ByteBuffer(bytes: body))
        let (request, client, timeout) = (post, self.client, self.timeout)
        let (seconds, attoseconds) = timeout.components
        let deadline = NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        do {
            // The deadline of `execute` ends with the answer's head; the race bounds the body too.
            return try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask {
                    let response = try await client.execute(request, deadline: deadline)
                    guard response.history.count <= 1 else { throw Failure.redirected }
                    let answer = try await response.body.collect(upTo: Self.maxAnswerBytes)
                    return Answer(status: Int(response.status.code), body: Array(answer.readableBytesView))
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answer = first else { throw Failure.timedOut(timeout) }
                return answer
            }
        } catch let failure as Failure {
            throw failure
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw .timedOut(timeout)
        } catch is NIOTooManyBytesError {
            throw .failed("its answer is longer than \(Self.maxAnswerBytes) bytes")
        } catch {
            throw .failed("\(error)")
        }
    }
}
