/// A receiver that cannot be set up as asked.
public enum ReceiverSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A base path of resumable uploads must be a path below `/` (`/files`): `/` itself
    /// would take every request.
    case invalidBasePath(String)
    /// The state directory of resumable uploads is not on the file system of the storage
    /// directory (or is mounted apart from it), so a completed upload could not be linked
    /// into place.
    case stateDirectoryOnAnotherFileSystem(String)
    /// Resumable uploads cannot be kept at the path given: a file cannot be made there, a
    /// file of the state directory cannot be hard-linked into the storage directory (a file
    /// system without hard links), or uploads kept in a hidden directory cannot be moved to
    /// the state directory. `reason` says which, with the system's error.
    case resumableStorageUnusable(String, reason: String)
    /// Another process holds the state directory of resumable uploads at this path (an
    /// exclusive `flock` on the directory): two processes on one directory would remove each
    /// other's files in progress and append to the same uploads. Stop the other process
    /// first, or give each its own state directory.
    case stateDirectoryInUse(String)

    public var description: String {
        switch self {
        case .invalidBasePath(let path):
            return "\"\(path)\" cannot be the base path of resumable uploads: give a path below /, such as /files."
        case .stateDirectoryOnAnotherFileSystem(let path):
            return "the state directory \(path) is not on the storage directory's file system, or is mounted apart from it: completed uploads are linked from one into the other"
        case .resumableStorageUnusable(let path, let reason):
            return "resumable uploads cannot be kept in \(path): \(reason)"
        case .stateDirectoryInUse(let path):
            return "the state directory \(path) is in use by another process (it holds a lock on it): stop that process first, or give this one a state directory of its own"
        }
    }

    /// `path` without a trailing `/`, checked to be below `/`.
    static func checked(_ path: String) throws -> String {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard trimmed.hasPrefix("/"), trimmed.count > 1 else { throw invalidBasePath(path) }
        return trimmed
    }
}
