import FormPostReceiving
import HTTPTypes
import NIOCore

/// A request's connection as a NIO channel whose outbound end takes Hummingbird's response
/// parts: its connection on HTTP/1.1, its stream on HTTP/2.
struct ChannelReceiverConnection: ReceiverConnection {
    /// The request's channel.
    let channel: any Channel

    /// A stream's channel has the connection's as its parent, which has the listening
    /// channel as its own.
    var isMultiplexedStream: Bool {
        channel.parent?.parent != nil
    }

    func sendInterim(_ status: HTTPResponse.Status, fields: HTTPFields) async {
        await InterimResponse.send(status, fields: fields, on: channel)
    }

    func end() {
        channel.close(promise: nil)
    }
}
