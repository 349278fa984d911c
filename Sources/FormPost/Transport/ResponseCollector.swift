import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

/// Collects a response for AsyncHTTPClient's delegate API (status, headers, a body of at
/// most `maxBytes`) and counts request body parts into `progress` as the connection
/// writes them, telling `onPartSent` of each. When the status is 300 or more it calls
/// `onFinalAnswer` once the answer's body has arrived (by its `Content-Length`, or 100 ms
/// after the head without one), so the caller can stop a body the server will not read.
final class ResponseCollector: HTTPClientResponseDelegate {
    /// What was received.
    struct Collected: Sendable {
        var status = 0
        var headers: HTTPFields = [:]
        var body: [UInt8] = []
        var version: HTTPVersion?
    }

    typealias Response = Collected

    private let progress: ProgressReporter
    private let maxBytes: Int
    private let onFinalAnswer: @Sendable () -> Void
    private let onPartSent: @Sendable () -> Void
    private let onError: @Sendable (any Error) -> Void
    /// What was received, and the body length that completes a final answer, once known.
    private let state = Mutex<(collected: Collected, awaitedBodyLength: Int?)>((Collected(), nil))

    /// `onPartSent` is called on the task's event loop each time the connection has written a
    /// part of the request body; `onError` when the exchange fails; `onFinalAnswer` as above.
    init(progress: ProgressReporter, maxBytes: Int, onPartSent: @escaping @Sendable () -> Void,
         onError: @escaping @Sendable (any Error) -> Void, onFinalAnswer: @escaping @Sendable () -> Void) {
        self.progress = progress
        self.maxBytes = maxBytes
        self.onPartSent = onPartSent
        self.onError = onError
        self.onFinalAnswer = onFinalAnswer
    }

    /// What has been collected so far (status 0 before the head).
    var collectedSoFar: Collected { state.withLock { $0.collected } }

    /// A final answer (300 or more) whose body arrived whole by its `Content-Length`, or nil.
    var completeFinalAnswer: Collected? {
        state.withLock { state in
            guard state.collected.status >= 300, let length = state.awaitedBodyLength, state.collected.body.count >= length else { return nil }
            return state.collected
        }
    }

    func didSendRequestHead(task: HTTPClient.Task<Collected>, _ head: HTTPRequestHead) {
        progress.restart()
    }

    func didSendRequestPart(task: HTTPClient.Task<Collected>, _ part: IOData) {
        progress.add(part.readableBytes)
        onPartSent()
    }

    func didReceiveError(task: HTTPClient.Task<Collected>, _ error: any Error) {
        onError(error)
    }

    func didReceiveHead(task: HTTPClient.Task<Collected>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let length = head.headers.first(name: "Content-Length").flatMap(Int.init)
        state.withLock {
            $0.collected.status = Int(head.status.code)
            $0.collected.headers = HTTPFields(head.headers)
            $0.collected.version = head.version
            if head.status.code >= 300 { $0.awaitedBodyLength = length }
        }
        if head.status.code >= 300 {
            if let length {
                if length == 0 { onFinalAnswer() }
            } else {
                let onFinalAnswer = self.onFinalAnswer
                task.eventLoop.scheduleTask(in: .milliseconds(100)) { onFinalAnswer() }
            }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Collected>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (fits, answerComplete) = state.withLock { state -> (Bool, Bool) in
            guard state.collected.body.count + buffer.readableBytes <= maxBytes else { return (false, false) }
            state.collected.body += buffer.readableBytesView
            return (true, state.awaitedBodyLength.map { state.collected.body.count >= $0 } ?? false)
        }
        if answerComplete { onFinalAnswer() }
        return fits ? task.eventLoop.makeSucceededVoidFuture() : task.eventLoop.makeFailedFuture(NIOTooManyBytesError(maxBytes: maxBytes))
    }

    func didFinishRequest(task: HTTPClient.Task<Collected>) throws -> Collected {
        collectedSoFar
    }
}
