import Hummingbird
import Logging
import NIOCore

/// An HTTP server running an ``UploadReceiver`` on `host:port` (port 0 picks a free one).
public struct UploadServer: Sendable {
    /// The receiver that answers every request.
    public let receiver: UploadReceiver
    /// The address to bind.
    public let host: String
    /// The port to bind; 0 for any free port.
    public let port: Int
    /// The level of the HTTP server's own log messages (the receiver logs one line per request).
    public let serverLogLevel: Logger.Level

    /// Creates a server for `receiver` on `host:port`.
    public init(receiver: UploadReceiver, host: String = "127.0.0.1", port: Int = 8080, serverLogLevel: Logger.Level = .warning) {
        self.receiver = receiver
        self.host = host
        self.port = port
        self.serverLogLevel = serverLogLevel
    }

    /// The Hummingbird application; run it with `runService()` (stops on SIGINT/SIGTERM) or
    /// `run()` inside a task that is cancelled to stop it. `onStarted` receives the bound port.
    public func application(onStarted: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let receiver = self.receiver
        let responder = CallbackResponder<BasicRequestContext> { request, context in
            await receiver.respond(to: request, context: context)
        }
        var logger = Logger(label: "formpost.server")
        logger.logLevel = serverLogLevel
        return Application(
            responder: responder,
            configuration: .init(address: .hostname(host, port: port), serverName: "formpost"),
            onServerRunning: { channel in await onStarted(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
