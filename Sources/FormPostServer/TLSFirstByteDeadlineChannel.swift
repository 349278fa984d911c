import FormPostReceiving
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore

/// Hummingbird's HTTPS channel (HTTP/2 by ALPN, else HTTP/1.1) with a ``FirstByteDeadline``
/// behind TLS: a connection that completes no handshake within the idle timeout is closed.
struct TLSFirstByteDeadlineChannel: ServerChildChannel {
    typealias Value = HTTP2UpgradeChannel.Value

    let upgrade: HTTP2UpgradeChannel
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        upgrade.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(FirstByteDeadline(timeout: timeout))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await upgrade.handle(value: value, logger: logger)
    }
}
