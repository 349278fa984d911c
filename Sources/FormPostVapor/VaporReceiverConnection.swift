#if Vapor
import FormPostServer
import HTTPTypes
import NIOConcurrencyHelpers

/// A Vapor request's connection, as far as Vapor gives a handle on it. Vapor's handlers
/// return only the final answer, so no interim (1xx) answer goes out: the IETF draft's
/// `104 Upload Resumption Supported` is not sent (a client learns the upload's URL from the
/// final answer, or asks again after a cut). Vapor does not hand a handler its channel
/// either: ``end()`` cancels the task that answers the request, whose body then ends as a
/// closed connection's would, so that a newer request can take the upload it held.
final class VaporReceiverConnection: ReceiverConnection {
    private let answering = NIOLockedValueBox<(task: Task<ReceiverResponse, Never>?, ended: Bool)>((nil, false))

    /// HTTP/2's streams carry the same answers; what tells a body's end (a stream's end,
    /// or `Content-Length`) is Vapor's to read.
    let isMultiplexedStream: Bool

    init(isMultiplexedStream: Bool) {
        self.isMultiplexedStream = isMultiplexedStream
    }

    func sendInterim(_ status: HTTPResponse.Status, fields: HTTPFields) async {}

    func end() {
        let task = answering.withLockedValue { state in
            state.ended = true
            return state.task
        }
        task?.cancel()
    }

    /// Answers with `respond` in a task of its own, which ``end()`` cancels; a cancellation
    /// of the caller's task reaches it too.
    func answer(_ respond: @escaping @Sendable () async -> ReceiverResponse) async -> ReceiverResponse {
        let task = Task { await respond() }
        let endedBefore = answering.withLockedValue { state in
            state.task = task
            return state.ended
        }
        if endedBefore { task.cancel() }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }
}
#endif
