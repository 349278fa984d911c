import FormPostReceiving
import HummingbirdCore
import Logging
import NIOCore

/// A server channel (HTTP/1.1, or HTTPS with HTTP/2) that closes at once a connection from
/// a client address that has ``ConnectionsPerAddress/limit`` connections open already,
/// before anything of it is read (a trusted proxy's are not counted); the others are set
/// up as `inner` sets them up.
struct AddressLimitedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    /// A connection refused for its address's count.
    struct TooManyConnections: Error, CustomStringConvertible {
        let address: String
        var description: String { "\(address) has too many connections open" }
    }

    let inner: Inner
    let connections: ConnectionsPerAddress
    /// Whether open connections are counted (``ReceiverMetrics/connection(opened:)``).
    var countsConnections = false

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if countsConnections {
            ReceiverMetrics.connection(opened: true)
            channel.closeFuture.whenComplete { _ in ReceiverMetrics.connection(opened: false) }
        }
        guard let remote = channel.remoteAddress, !connections.exempt.contains(remote), let address = ClientAddress.key(remote) else {
            return inner.setup(channel: channel, logger: logger)
        }
        guard connections.enter(address) else {
            logger.notice("closed a connection from \(address): it has \(connections.limit) open already")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(TooManyConnections(address: address))
        }
        let connections = self.connections
        channel.closeFuture.whenComplete { _ in connections.leave(address) }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
