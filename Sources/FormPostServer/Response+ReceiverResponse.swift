import FormPostReceiving
import Hummingbird
import NIOCore

extension Response {
    /// Hummingbird's answer for `response`. When it ends the exchange and `channel` (the
    /// request's) is known, the channel is closed `ReceiverResponse/lingeringTime` after
    /// the answer was written.
    public init(_ response: ReceiverResponse, channel: (any Channel)?) {
        let buffer = response.body
        guard response.endsExchange, let channel else {
            self.init(status: response.status, headers: response.headers, body: ResponseBody(byteBuffer: buffer))
            return
        }
        let body = ResponseBody(contentLength: buffer.readableBytes) { writer in
            try await writer.write(buffer)
            try await writer.finish(nil)
            channel.eventLoop.scheduleTask(in: TimeAmount(ReceiverResponse.lingeringTime)) { channel.close(promise: nil) }
        }
        self.init(status: response.status, headers: response.headers, body: body)
    }

    /// Hummingbird's answer for `response` to a request with `context`, whose channel a
    /// ``ReceiverRequestContext`` gives.
    init(_ response: ReceiverResponse, context: some RequestContext) {
        self.init(response, channel: (context as? ReceiverRequestContext)?.channel)
    }
}
