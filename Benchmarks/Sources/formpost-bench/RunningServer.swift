import FormPostServer

/// An `UploadServer` running in this process on the port it was given (0: a free one),
/// until ``stop()``.
struct RunningServer {
    /// The port it listens on.
    let port: Int
    private let serving: Task<Void, any Error>

    /// Starts `server` and waits until it listens.
    init(_ server: UploadServer) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = try server.application { continuation.yield($0) }
        serving = Task { try await application.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            serving.cancel()
            throw BenchmarkFailure("the receiver did not start")
        }
        self.port = port
    }

    /// Stops the server.
    func stop() {
        serving.cancel()
    }
}
