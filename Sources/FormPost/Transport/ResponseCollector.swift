import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

/// Collects a response for AsyncHTTPClient's delegate API (status, headers, a body of at
/// most `maxBytes`) and counts request body parts into `progress` as the connection
/// writes them. When the status is 300 or more it calls `onFinalAnswer` once the answer's
/// body has arrived (by its `Content-Length`, or 100 ms after the head without one), so
/// the caller can stop a body the server will not read.
final class ResponseCollector: HTTPClientResponseDelegate {
    /// What was received.
    struct Collected: Sendable {
        var status = 0
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
    }

    typealias Response = Collected

    private let progress: ProgressReporter
    private let maxBytes: Int
    private let onFinalAnswer: @Sendable () -> Void
    private let collected = Mutex(Collected())
    private let awaitedBodyLength = Mutex<Int?>(nil)

    init(progress: ProgressReporter, maxBytes: Int, onFinalAnswer: @escaping @Sendable () -> Void) {
        self.progress = progress
        self.maxBytes = maxBytes
        self.onFinalAnswer = onFinalAnswer
    }

    /// The status received, or 0 before the head.
    var status: Int { collected.withLock { $0.status } }

    /// What has been collected so far.
    var collectedSoFar: Collected { collected.withLock { $0 } }

    func didSendRequestHead(task: HTTPClient.Task<Collected>, _ head: HTTPRequestHead) {
        progress.restart()
    }

    func didSendRequestPart(task: HTTPClient.Task<Collected>, _ part: IOData) {
        progress.add(part.readableBytes)
    }

    func didReceiveHead(task: HTTPClient.Task<Collected>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        collected.withLock {
            $0.status = Int(head.status.code)
            $0.headers = head.headers.map { ($0.name, $0.value) }
        }
        if head.status.code >= 300 {
            if let length = head.headers.first(name: "Content-Length").flatMap(Int.init) {
                if length == 0 { onFinalAnswer() } else { awaitedBodyLength.withLock { $0 = length } }
            } else {
                let onFinalAnswer = self.onFinalAnswer
                task.eventLoop.scheduleTask(in: .milliseconds(100)) { onFinalAnswer() }
            }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Collected>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (fits, received) = collected.withLock { state -> (Bool, Int) in
            guard state.body.count + buffer.readableBytes <= maxBytes else { return (false, state.body.count) }
            state.body += buffer.readableBytesView
            return (true, state.body.count)
        }
        if let awaited = awaitedBodyLength.withLock({ $0 }), received >= awaited { onFinalAnswer() }
        return fits ? task.eventLoop.makeSucceededVoidFuture() : task.eventLoop.makeFailedFuture(NIOTooManyBytesError(maxBytes: maxBytes))
    }

    func didFinishRequest(task: HTTPClient.Task<Collected>) throws -> Collected {
        collected.withLock { $0 }
    }
}
