import FormPostServer
import ServiceLifecycle

/// The service of `formpost serve` that says when it begins to stop: the last of its
/// services, so the first a stop signal reaches (a service group stops its services in
/// reverse order). From that moment `/readyz` answers 503; it writes its line, waits
/// `--shutdown-delay` (the server still taking connections, so that a load balancer sees
/// the 503 and stops sending any) and ends; the server's graceful shutdown follows.
struct StopAnnouncement: Service {
    /// The seconds requests in flight are given, as written on the command line.
    let grace: Double
    /// The seconds connections are still taken after the stop began.
    let delay: Double
    /// The health endpoints told that the server is stopping, if it has them.
    let health: ServerHealth?
    /// Writes a line about the server's state (`formpost serve`'s announcements).
    let announce: @Sendable (String) -> Void

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // Cancelled: the group stops without a graceful shutdown.
        }
        health?.beginStopping()
        if delay > 0 {
            announce("stopping: /readyz answers 503; connections are still taken for \(Self.seconds(delay)) s")
            do {
                try await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
            } catch {
                return
            }
        }
        announce("stopping: no new connections; requests in flight have \(Self.seconds(grace)) s to finish")
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
