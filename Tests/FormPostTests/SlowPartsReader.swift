#if os(Linux)
import Crypto
import Foundation
import FormPostServer
import NIOCore

/// The handler of ``SlowReaderApp``, the same on every framework: reads a form's parts
/// through `FormParts` as a slow handler would — nothing for ``stall``, then at most
/// ``bytesPerSecond`` — and answers what it read with the process's peak resident set.
enum SlowPartsReader {
    /// What the handler answers, as JSON.
    struct Account: Codable {
        struct Part: Codable {
            let name: String
            let size: Int
            let sha256: String
        }

        let parts: [Part]
        /// This process's peak resident set (`VmHWM`) once the body was read, in KiB.
        let peakKiB: Int
    }

    /// How long the handler waits before it reads a byte.
    static let stall: Duration = .seconds(2)
    /// The pace it reads at afterwards.
    static let bytesPerSecond = 200_000_000.0

    /// Reads every part of `parts` slowly; returns the ``Account`` as JSON.
    static func read<Body>(_ parts: FormParts<Body>) async throws -> Data {
        try await Task.sleep(for: stall)
        let started = ContinuousClock.now
        var read = 0
        var accounts: [Account.Part] = []
        for try await part in parts {
            var hasher = SHA256()
            var size = 0
            for try await buffer in part.body {
                buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                size += buffer.readableBytes
                read += buffer.readableBytes
                let due = started + .seconds(Double(read) / bytesPerSecond)
                if due > .now { try await Task.sleep(until: due, clock: .continuous) }
            }
            accounts.append(Account.Part(name: part.name, size: size, sha256: hexString(hasher.finalize())))
        }
        return try JSONEncoder().encode(Account(parts: accounts, peakKiB: peakResidentKiB()))
    }
}
#endif
