#if os(Linux)
#if Vapor
import FormPostVapor
import Vapor

/// Serves ``SlowPartsReader`` on `POST /parts` with Vapor (the body streamed, read through
/// FormPostVapor's `Request.formParts()`), on 127.0.0.1:`port`.
func serveSlowReaderOnVapor(port: Int) async throws {
    let app = try await Application.make(Environment(name: "testing", arguments: ["slow-reader", "serve"]))
    app.logger.logLevel = .warning
    app.http.server.configuration.hostname = "127.0.0.1"
    app.http.server.configuration.port = port
    app.on(.POST, "parts", body: .stream) { request async throws -> Response in
        let account = try await SlowPartsReader.read(request.formParts())
        return Response(status: .ok, headers: ["Content-Type": "application/json"], body: .init(data: account))
    }
    do {
        try await app.execute()
    } catch {
        try await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
}
#else
/// Without the "Vapor" trait there is no Vapor app to run.
func serveSlowReaderOnVapor(port: Int) async throws {
    throw ReceiverAdapter.AdapterError.builtWithoutVapor
}
#endif
#endif
