#if os(Linux)
import FormPostServer
import Hummingbird
import NIOCore

/// Serves ``SlowPartsReader`` on `POST /parts` with Hummingbird, on 127.0.0.1:`port`.
func serveSlowReaderOnHummingbird(port: Int) async throws {
    let router = Router()
    router.post("parts") { request, _ -> Response in
        let account = try await SlowPartsReader.read(request.formParts())
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: account)))
    }
    try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port))).runService()
}
#endif
