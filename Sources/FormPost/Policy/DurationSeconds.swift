import NIOCore

extension Duration {
    /// The duration in seconds, with its fraction (for Foundation's `TimeInterval`).
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration as NIO's `TimeAmount` (nanoseconds, saturating).
    var timeAmount: TimeAmount {
        let (nanoseconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return .nanoseconds(overflow ? .max : nanoseconds + components.attoseconds / 1_000_000_000)
    }
}
