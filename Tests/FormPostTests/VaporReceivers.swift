#if Vapor
import FormPostServer
import FormPostVapor
import Vapor

/// Runs `body` with the port of a Vapor app in this process, on 127.0.0.1, that mounts the
/// receivers with FormPostVapor as `upload-receiver-vapor` does: forms and the IETF draft's
/// creations on `/upload`, tus and the draft's uploads under their base paths. Stops it
/// after `body` returns or throws.
func whileVaporReceives<T: Sendable>(_ receiver: UploadReceiver, tus: TusReceiver?, resumable: ResumableUploadReceiver?,
                                     _ body: @Sendable (Int) async throws -> T) async throws -> T {
    try await whileVaporServes(UploadRoutesConfiguration(receiver: receiver, tus: tus, resumable: resumable), body)
}

/// Runs `body` with the port of a Vapor app in this process, on 127.0.0.1, that mounts
/// `routes` — receivers and gates — with FormPostVapor, forms on `/upload`. Stops it after
/// `body` returns or throws.
func whileVaporServes<T: Sendable>(_ routes: UploadRoutesConfiguration, _ body: @Sendable (Int) async throws -> T) async throws -> T {
    try await whileVaporRuns({ $0.receiveUploads(at: "/upload", routes: routes) }, body)
}

/// Runs `body` with the port of a Vapor app in this process, on 127.0.0.1, whose routes
/// `addRoutes` adds. Stops it after `body` returns or throws.
func whileVaporRuns<T: Sendable>(_ addRoutes: (Application) throws -> Void, _ body: @Sendable (Int) async throws -> T) async throws -> T {
    let app = try await Application.make(Environment(name: "testing", arguments: ["formpost-tests"]))
    app.logger.logLevel = .critical
    app.http.server.configuration.idleTimeout = .seconds(60)
    let outcome: Result<T, any Error>
    do {
        try addRoutes(app)
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw ReceiverAdapter.AdapterError.notListening(.vapor) }
        outcome = .success(try await body(port))
    } catch {
        outcome = .failure(error)
    }
    await app.server.shutdown()
    try await app.asyncShutdown()
    return try outcome.get()
}
#endif
