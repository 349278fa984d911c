import Synchronization

/// The background transports of this process, one per session identifier: a process may
/// have only one session per identifier, and relaunched for a session's events it must
/// make that session again to receive them, so asking for a transport by identifier makes
/// it once and returns the same one after.
enum BackgroundTransportRegistry {
    private static let transports = Mutex<[String: URLSessionTransport]>([:])

    /// The transport of session `identifier`, made by `make` if there is none.
    static func transport(identifier: String, make: () -> URLSessionTransport) -> URLSessionTransport {
        transports.withLock { transports in
            if let transport = transports[identifier] { return transport }
            let transport = make()
            transports[identifier] = transport
            return transport
        }
    }

    /// Forgets `transport` (it was invalidated): asking for its identifier makes a new one.
    static func forget(_ transport: URLSessionTransport) {
        transports.withLock { transports in
            for (identifier, kept) in transports where kept === transport { transports[identifier] = nil }
        }
    }
}
