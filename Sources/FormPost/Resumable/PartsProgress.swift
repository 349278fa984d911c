import Synchronization

/// The progress of partial uploads sent at once, reported as one: the sums of their
/// acknowledged and sent bytes.
final class PartsProgress: Sendable {
    private let parts: Mutex<[ResumableProgress?]>
    private let total: Int64
    private let report: (@Sendable (ResumableProgress) -> Void)?

    init(parts: Int, total: Int64, report: (@Sendable (ResumableProgress) -> Void)?) {
        self.parts = Mutex(Array(repeating: nil, count: parts))
        self.total = total
        self.report = report
    }

    /// Notes part `index`'s progress, and reports the whole.
    func update(_ index: Int, _ progress: ResumableProgress) {
        guard let report else { return }
        let whole = parts.withLock { parts in
            parts[index] = progress
            return parts.compactMap { $0 }.reduce(ResumableProgress(acknowledged: 0, sent: 0, total: total, resumedFrom: 0)) { sum, part in
                ResumableProgress(acknowledged: sum.acknowledged + part.acknowledged, sent: sum.sent + part.sent, total: total,
                                  resumedFrom: sum.resumedFrom + part.resumedFrom)
            }
        }
        report(whole)
    }
}
