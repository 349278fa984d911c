import Synchronization

/// The connections open from each client address (``ClientAddress``), so that one address
/// cannot take every connection of a server (``ConnectionLimits/maxConnectionsPerAddress``).
package final class ConnectionsPerAddress: Sendable {
    /// The most connections one address may have open at once.
    package let limit: Int
    /// The proxies whose connections are not counted: all their clients' come from them.
    package let exempt: TrustedProxies
    private let open = Mutex<[String: Int]>([:])

    package init(limit: Int, exempt: TrustedProxies = TrustedProxies()) {
        self.limit = limit
        self.exempt = exempt
    }

    /// Counts one more connection from `address`, unless it has ``limit`` open already;
    /// whether it was counted (then ``leave(_:)`` must follow when it closes).
    package func enter(_ address: String) -> Bool {
        open.withLock { open in
            let count = open[address, default: 0]
            guard count < limit else { return false }
            open[address] = count + 1
            return true
        }
    }

    /// Counts a connection from `address` as closed.
    package func leave(_ address: String) {
        open.withLock { open in
            let count = open[address, default: 1] - 1
            open[address] = count > 0 ? count : nil
        }
    }
}
