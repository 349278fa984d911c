import FormPostReceiving
import Hummingbird
import NIOCore

extension ReceiverRequest {
    /// The receivers' view of Hummingbird's `request` with `context`: a
    /// ``ReceiverRequestContext`` gives its connection, client address and grant; another
    /// context its remote address if it tells one.
    public init(_ request: Request, context: some RequestContext) {
        let receiving = context as? ReceiverRequestContext
        self.init(method: request.method, path: request.uri.path, query: request.uri.query, headers: request.headers,
                  body: ReceiverRequestBody(request.body),
                  clientAddress: receiving?.clientAddress ?? (context as? any RemoteAddressRequestContext)?.remoteAddress,
                  grant: receiving?.grant, connection: receiving.map { ChannelReceiverConnection(channel: $0.channel) })
    }
}
