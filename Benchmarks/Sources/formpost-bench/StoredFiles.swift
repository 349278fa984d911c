import Foundation

/// What a receiver stored in its directory during a benchmark.
enum StoredFiles {
    /// Removes the stored files of `stored`, and its resumable uploads' state (`.tus/`,
    /// `.resumable/`), so that the next run starts from an empty receiver.
    static func clear(_ stored: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: stored) where !name.hasPrefix(".") {
            try FileManager.default.removeItem(atPath: stored + "/" + name)
        }
        for state in [stored + "/.tus", stored + "/.resumable"] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: state)) ?? [] {
                try FileManager.default.removeItem(atPath: state + "/" + name)
            }
        }
    }
}
