import ServiceLifecycle

/// The service of `formpost serve` that says when it begins to stop: the last of its
/// services, so the first a stop signal reaches (a service group stops its services in
/// reverse order). It writes its line and ends; the server's graceful shutdown follows.
struct StopAnnouncement: Service {
    /// The seconds requests in flight are given, as written on the command line.
    let grace: Double

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // Cancelled: the group stops without a graceful shutdown.
        }
        let seconds = grace == grace.rounded() ? String(Int64(grace)) : String(grace)
        Descriptor.standardError.print("formpost: stopping: no new connections; requests in flight have \(seconds) s to finish\n")
    }
}
