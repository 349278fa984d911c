#if Vapor
import FormPostReceiving
import HTTPTypes
import NIOHTTP1
import Vapor

extension Response {
    /// Vapor's answer for `response`: its status, fields and body. Vapor sets
    /// `Content-Length` from the body (a `HEAD` answer's is kept) and `Connection` itself.
    public convenience init(_ response: ReceiverResponse) {
        var headers = HTTPHeaders()
        for field in response.headers where field.name != .connection {
            headers.add(name: field.name.rawName, value: field.value)
        }
        let status = HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase)
        self.init(status: status, headers: headers, body: Body(buffer: response.body))
        if let length = response.headers[.contentLength], response.body.readableBytes == 0 {
            self.headers.replaceOrAdd(name: .contentLength, value: length)
        }
    }

    /// Vapor's answer for `response` (which has a body), whose body is written at once and
    /// whose end is written by `ending`: `.end`, or `.error` to end the exchange (on
    /// HTTP/1.1 Vapor then closes the connection, after the body's bytes). A body whose
    /// write fails is ended in error at once.
    convenience init(_ response: ReceiverResponse, ending: @escaping @Sendable (any AsyncBodyStreamWriter) async throws -> Void) {
        self.init(response)
        let bytes = response.body
        body = Body(asyncStream: { writer in
            do {
                try await writer.write(.buffer(bytes))
            } catch {
                try? await writer.write(.error(error))
                throw error
            }
            try await ending(writer)
        }, count: bytes.readableBytes)
    }
}
#endif
