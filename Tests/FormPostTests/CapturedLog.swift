import Logging
import Synchronization

/// A log handler that keeps what it is given: each message with its level and metadata
/// (the handler's own and the message's, rendered as text).
final class CapturedLog: LogHandler, @unchecked Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]

        /// The message and its metadata as one text, to search for what must not be logged.
        var text: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    private let stored = Mutex<[Entry]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var entries: [Entry] { stored.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let all = self.metadata.merging(metadata ?? [:]) { _, new in new }.mapValues { "\($0)" }
        stored.withLock { $0.append(Entry(level: level, message: message.description, metadata: all)) }
    }

    /// A logger that writes here.
    var logger: Logger {
        Logger(label: "test") { _ in self }
    }
}
