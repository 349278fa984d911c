/// A receiver that cannot be set up as asked.
public enum ReceiverSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A base path of resumable uploads must be a path below `/` (`/files`): `/` itself
    /// would take every request.
    case invalidBasePath(String)
    /// The state directory of resumable uploads is not on the file system of the storage
    /// directory, so a completed upload could not be renamed into place.
    case stateDirectoryOnAnotherFileSystem(String)

    public var description: String {
        switch self {
        case .invalidBasePath(let path):
            return "\"\(path)\" cannot be the base path of resumable uploads: give a path below /, such as /files."
        case .stateDirectoryOnAnotherFileSystem(let path):
            return "the state directory \(path) is not on the storage directory's file system: completed uploads are renamed from one to the other"
        }
    }

    /// `path` without a trailing `/`, checked to be below `/`.
    static func checked(_ path: String) throws -> String {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard trimmed.hasPrefix("/"), trimmed.count > 1 else { throw invalidBasePath(path) }
        return trimmed
    }
}
