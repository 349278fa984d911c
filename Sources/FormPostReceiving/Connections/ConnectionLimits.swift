/// How long and how many connections an `UploadServer` holds open, so that clients that
/// connect and then stall — half a request head, a head and no body, a body that stops —
/// cannot keep its connections (and their memory and descriptors) for ever.
public struct ConnectionLimits: Sendable, Equatable {
    /// How long a connection may go without the server receiving a part of a request (its
    /// whole head, a piece of its body) before it is closed; a head that takes longer to
    /// arrive, counted from the connection's start or the previous answer, closes it too.
    /// Default 60 s, as nginx's `client_header_timeout` and `client_body_timeout`.
    public var idleTimeout: Duration
    /// The most connections open at once; further clients wait in the listen queue until
    /// one closes. Default 1024.
    public var maxConnections: Int
    /// The most connections open at once from one client address (IPv6 addresses counted
    /// per /56); a further one from it is closed at once, unread. Default 32, so that 32
    /// addresses are needed to take the default 1024. Behind a reverse proxy every
    /// connection comes from the proxy: name it in `UploadServer/trustedProxies`, whose
    /// connections are not counted, or set this to ``maxConnections``.
    public var maxConnectionsPerAddress: Int

    /// Creates limits; by default 60 s of idleness, 1024 connections, 32 from one address.
    public init(idleTimeout: Duration = .seconds(60), maxConnections: Int = 1024, maxConnectionsPerAddress: Int = 32) {
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }
}
