/// A file recorded for a part: its path, and the size and identity it had when appended.
struct FileReference: Sendable {
    let path: String
    let size: Int64
    let identity: FileIdentity

    init(path: String) throws {
        self.path = path
        let status = try SystemFile.inspect(path: path)
        size = status.size
        identity = status.identity
    }
}
