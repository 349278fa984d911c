#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPost
import Synchronization

/// A one-line progress bar on standard error — bytes sent, percentage, rate, time left —
/// and a summary line at the end. Silent unless standard error is a terminal.
final class ProgressBar: Sendable {
    private let enabled: Bool
    private let started = Date()
    private let lastLine = Mutex("")

    init(enabled: Bool) {
        self.enabled = enabled && Descriptor.standardError.isTerminal
    }

    /// Redraws the bar for `progress`.
    func update(_ progress: UploadProgress) {
        guard enabled else { return }
        let line = Self.render(progress, elapsed: Date().timeIntervalSince(started), width: 30)
        lastLine.withLock { $0 = line }
        Descriptor.standardError.print(("\r" + line + "\u{1B}[K"))
    }

    /// Ends the bar with a summary line.
    func finish(summary: String) {
        guard enabled else { return }
        Descriptor.standardError.print(("\r\u{1B}[K" + summary + "\n"))
    }

    /// The shortest time over which a rate means something; before it the bar shows neither
    /// rate nor time left.
    static let minimumSample = 0.5

    /// The bar's text, in one unit family (MiB, MiB/s):
    /// `[#####.....]  45%  450.0 MiB / 1.0 GiB  1.2 GiB/s  ETA 0:01`.
    static func render(_ progress: UploadProgress, elapsed: Double, width: Int) -> String {
        let measured = elapsed >= minimumSample && progress.bytesSent > 0
        let rate = measured ? Double(progress.bytesSent) / elapsed : 0
        let rateText = measured ? "  " + ByteSize.format(Int64(rate)) + "/s" : ""
        guard let fraction = progress.fraction, let total = progress.totalBytes else {
            return "\(ByteSize.format(progress.bytesSent)) sent\(rateText)"
        }
        let filled = min(width, Int(fraction * Double(width)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        var line = "[\(bar)] \(NumberText.padded(Int(fraction * 100), width: 3))%  \(ByteSize.format(progress.bytesSent)) / \(ByteSize.format(total))" + rateText
        if measured {
            let remaining = Double(total - progress.bytesSent) / rate
            line += "  ETA \(Int(remaining) / 60):\(NumberText.padded(Int(remaining) % 60, width: 2, with: "0"))"
        }
        return line
    }
}
