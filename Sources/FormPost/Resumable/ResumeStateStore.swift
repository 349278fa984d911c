#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where resumable uploads remember their upload URLs between runs of a process: one small
/// JSON file per upload, keyed by a fingerprint of the file (absolute path, size,
/// modification time) and the endpoint, written atomically and removed once the upload is
/// complete.
public struct ResumeStateStore: Sendable {
    /// The directory of the entries.
    public let directory: String

    /// A store in `directory` (created when first written to).
    public init(directory: String) {
        self.directory = directory
    }

    /// The user's store: `$XDG_STATE_HOME/formpost` when that variable names an absolute
    /// directory (on every platform: a user's or a test's explicit choice); else
    /// `~/.local/state/formpost` on Linux, `Application Support/formpost` on Apple platforms.
    public static var standard: ResumeStateStore {
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return ResumeStateStore(directory: state + "/formpost")
        }
        #if canImport(Darwin)
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory() + "/Library/Application Support")
        return ResumeStateStore(directory: support.appendingPathComponent("formpost").path)
        #else
        return ResumeStateStore(directory: FileManager.default.homeDirectoryForCurrentUser.path + "/.local/state/formpost")
        #endif
    }

    /// The entry with `entry`'s fingerprint, if one is kept.
    public func load(matching entry: ResumeEntry) -> ResumeEntry? {
        guard let data = FileManager.default.contents(atPath: path(for: entry)),
              let kept = try? JSONDecoder().decode(ResumeEntry.self, from: data),
              kept.fingerprint == entry.fingerprint else { return nil }
        return kept
    }

    /// Keeps `entry`, replacing one with the same fingerprint; atomically.
    public func save(_ entry: ResumeEntry) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(entry).write(to: URL(fileURLWithPath: path(for: entry)), options: .atomic)
    }

    /// Forgets the entry with `entry`'s fingerprint.
    public func remove(matching entry: ResumeEntry) {
        try? FileManager.default.removeItem(atPath: path(for: entry))
    }

    /// The entry's file: FNV-1a of its fingerprint (the fingerprint itself is checked on load).
    private func path(for entry: ResumeEntry) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in entry.fingerprint.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return directory + "/" + String(hash, radix: 16) + ".json"
    }
}
