#if Vapor
import FormPostServer
import HTTPTypes
import Vapor

extension ReceiverRequest {
    /// The receivers' view of Vapor's `request`: its body streamed (the route must be
    /// registered with `body: .stream`, else Vapor collects it first), its peer as the
    /// client's address, and `connection` (see ``VaporReceiverConnection``).
    public init(_ request: Request, connection: (any ReceiverConnection)? = nil) {
        var fields = HTTPFields()
        for (name, value) in request.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        self.init(method: HTTPRequest.Method(request.method.rawValue) ?? .get, path: request.url.path, query: request.url.query,
                  headers: fields, body: ReceiverRequestBody(request.body), clientAddress: request.peerAddress ?? request.remoteAddress,
                  connection: connection)
    }
}
#endif
