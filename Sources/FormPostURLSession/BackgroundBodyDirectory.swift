import Foundation

/// The directory where a background transport writes its temporary body files: one per
/// session, named from the session's identifier, so that a later run of the app finds what
/// an earlier one left (``BackgroundSessionLedger`` decides what to remove; this only lists,
/// makes and removes files).
struct BackgroundBodyDirectory: Sendable {
    /// The directory's path.
    let path: String

    /// The directory at `path`.
    init(path: String) {
        self.path = path
    }

    /// The directory of session `identifier` under `parent`: a name made of the identifier,
    /// each character other than ASCII letters, digits, `-`, `_` and `.` (and a leading `.`)
    /// written as `%XX` of its UTF-8 bytes, so that no identifier can name a path elsewhere.
    init(identifier: String, under parent: String) {
        path = (parent.hasSuffix("/") ? parent : parent + "/") + Self.directoryName(identifier: identifier)
    }

    /// The directory of session `identifier` in the user's caches directory (which is not
    /// backed up), `FormPost-background-uploads/IDENTIFIER`.
    init(identifier: String) {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first?.path ?? NSTemporaryDirectory()
        self.init(identifier: identifier, under: caches + "/FormPost-background-uploads")
    }

    /// The directory's name for session `identifier`.
    static func directoryName(identifier: String) -> String {
        var name = ""
        for byte in identifier.utf8 {
            let plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || (byte == 0x2E && !name.isEmpty)
            name += plain ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }
        return name.isEmpty ? "%" : name
    }

    /// Makes the directory if it is missing (a failure shows when a body is written there).
    func prepare() {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A new body file's name, unique: `UUID.body`.
    func newBodyFileName() -> String {
        UUID().uuidString + BackgroundSessionLedger<Never>.bodyFileExtension
    }

    /// The path of the file named `name` in the directory.
    func path(of name: String) -> String {
        path + "/" + name
    }

    /// The names of the files in the directory (none when it is missing).
    func fileNames() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// Removes the file named `name`, if it is there.
    func remove(_ name: String) {
        unlink(path(of: name))
    }
}
