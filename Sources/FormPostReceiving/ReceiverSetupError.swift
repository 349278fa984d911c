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
    /// The events are to be kept in a queue other than a directory's
    /// (``ObjectEventQueue``, say) while the uploads are kept on the disk, whose completions
    /// record their events with the upload's files: give an ``UploadEventOutbox``, or
    /// ``ReceiverConfiguration/objectStorage`` too. `location` is the queue's.
    case eventsApartFromUploads(location: String)

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
        case .eventsApartFromUploads(let location):
            return "the events cannot be kept in \(location) while the uploads are kept on the disk: give a directory's outbox, or keep the uploads in object storage too"
        }
    }

    /// The directory outbox that the resumable uploads kept on the disk by `configuration`
    /// record their events in, or nil for none (nor when they are kept in object storage,
    /// whose completions record into ``ReceiverConfiguration/events`` themselves).
    ///
    /// - Throws: ``eventsApartFromUploads(location:)``.
    static func directoryOutbox(of configuration: ReceiverConfiguration) throws -> UploadEventOutbox? {
        guard let events = configuration.events, configuration.objectStorage == nil else { return nil }
        guard let outbox = events as? UploadEventOutbox else { throw eventsApartFromUploads(location: events.location) }
        return outbox
    }

    /// `path` without a trailing `/`, checked to be below `/`.
    static func checked(_ path: String) throws -> String {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard trimmed.hasPrefix("/"), trimmed.count > 1 else { throw invalidBasePath(path) }
        return trimmed
    }
}
