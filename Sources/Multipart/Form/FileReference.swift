/// A file recorded for a part: its path and the size it had when appended.
struct FileReference: Sendable {
    let path: String
    let size: Int64

    init(path: String) throws {
        self.path = path
        self.size = try SystemFile.inspect(path: path).size
    }
}
