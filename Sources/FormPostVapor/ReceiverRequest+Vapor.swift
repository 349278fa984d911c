#if Vapor
@_exported import FormPostReceiving
import HTTPTypes
import Vapor

extension ReceiverRequest {
    /// The receivers' view of Vapor's `request`: its fields, `body` (its own streamed body
    /// when not given, read with Vapor's `drain` once iterated; the route must be registered
    /// with `body: .stream`, else Vapor collects it first), the connection's peer as the
    /// client's address — never `Forwarded` or `X-Forwarded-For`, which any client can send
    /// (Vapor's `peerAddress` reads them) — and `connection`.
    public init(_ request: Request, body: ReceiverRequestBody? = nil, connection: (any ReceiverConnection)? = nil) {
        var fields = HTTPFields()
        for (name, value) in request.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        // Vapor's parser takes only methods that are tokens, which HTTPTypes takes too.
        let method = HTTPRequest.Method(request.method.rawValue) ?? .get
        self.init(method: method, path: request.url.path, query: request.url.query, headers: fields,
                  body: body ?? ReceiverRequestBody(VaporRequestBody(request)), clientAddress: request.remoteAddress, connection: connection)
    }
}
#endif
