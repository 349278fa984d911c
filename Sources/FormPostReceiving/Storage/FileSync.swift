#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Forces what the receivers wrote from the page cache to the storage device, so that what
/// they acknowledge survives a power loss: a file's bytes and size (`fdatasync`; on Apple
/// platforms `F_FULLFSYNC`, which also empties the drive's cache), and a directory's
/// entries (`fsync` of the directory) after a file was made, renamed or linked in it. Every
/// call blocks on the file system: call them on NIO's thread pool.
package enum FileSync {
    /// One sync made.
    package enum Event: Equatable, Sendable {
        /// A file's bytes and size.
        case data(String)
        /// A directory's entries.
        case directory(String)

        /// The path synced.
        package var path: String {
            switch self {
            case .data(let path), .directory(let path): path
            }
        }
    }

    /// The syncs made under the directories tests watch, in order: empty but in tests.
    package static let recorder = SyncRecorder()

    /// Syncs the bytes (and size) of the file open as `descriptor`.
    ///
    /// - Throws: ``ReceiverFailure`` naming `what` failed, with the system's error.
    static func data(_ descriptor: Int32, what: String = "syncing an upload to the disk failed") throws {
        #if canImport(Darwin)
        let synced = fcntl(descriptor, F_FULLFSYNC) == 0 || fsync(descriptor) == 0
        #else
        let synced = fdatasync(descriptor) == 0
        #endif
        guard synced else { throw ReceiverFailure.storing(what, errno: errno) }
        recorder.note { .data(path(of: descriptor)) }
    }

    /// Syncs the bytes, size and mode of the file at `path`.
    ///
    /// - Throws: ``ReceiverFailure`` naming `what` failed, with the system's error.
    static func file(_ path: String, what: String = "syncing an upload to the disk failed") throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReceiverFailure.storing(what, errno: errno) }
        defer { close(descriptor) }
        #if canImport(Darwin)
        let synced = fcntl(descriptor, F_FULLFSYNC) == 0 || fsync(descriptor) == 0
        #else
        let synced = fsync(descriptor) == 0
        #endif
        guard synced else { throw ReceiverFailure.storing(what, errno: errno) }
        recorder.note { .data(path) }
    }

    /// Syncs the entries of the directory at `path`: files made, renamed, linked or removed
    /// in it.
    ///
    /// - Throws: ``ReceiverFailure`` naming `what` failed, with the system's error.
    static func directory(_ path: String, what: String = "syncing a directory of uploads to the disk failed") throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReceiverFailure.storing(what, errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw ReceiverFailure.storing(what, errno: errno) }
        recorder.note { .directory(path) }
    }

    /// The path `descriptor` is open at, as the recorder names it.
    private static func path(of descriptor: Int32) -> String {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard count > 0 else { return "descriptor \(descriptor)" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #elseif canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(descriptor, F_GETPATH, &buffer) == 0 else { return "descriptor \(descriptor)" }
        return String(cString: buffer)
        #else
        return "descriptor \(descriptor)"
        #endif
    }
}

/// The syncs ``FileSync`` made under the directories watched: tests watch their own
/// directory and read what was synced there, and when, against what was answered.
package final class SyncRecorder: Sendable {
    private let state = Mutex<(watched: [String], events: [FileSync.Event])>(([], []))

    /// Records, from now on, the syncs of paths under `directory` (a path as the system
    /// resolves it: no symbolic links).
    package func watch(_ directory: String) {
        state.withLock { $0.watched.append(directory.hasSuffix("/") ? directory : directory + "/") }
    }

    /// The syncs recorded under `directory`, in order.
    package func events(under directory: String) -> [FileSync.Event] {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return state.withLock { $0.events.filter { ($0.path + "/").hasPrefix(prefix) } }
    }

    /// Records the event `make` makes, when a directory is watched at all (a path is
    /// resolved only then) and it is under one.
    fileprivate func note(_ make: () -> FileSync.Event) {
        guard state.withLock({ !$0.watched.isEmpty }) else { return }
        let event = make()
        state.withLock { state in
            if state.watched.contains(where: { (event.path + "/").hasPrefix($0) }) { state.events.append(event) }
        }
    }
}
