#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The exclusive lock a process holds on a state directory of resumable uploads: an
/// `flock` on the directory itself (opened read-only: no file is added to it), taken when
/// the first receiver of the process opens the directory and held until the process ends. A second process on the same directory would
/// remove the first's files in progress at its start and append to the same uploads beside
/// it; it is refused instead (``ReceiverSetupError/stateDirectoryInUse(_:)``). Receivers of
/// one process share the lock (a receiver made again on the same directory, as after a
/// restart within a process, takes it over). The lock is the kernel's, so it goes with the
/// process however it ends; it holds on local file systems (on NFS, `flock` is emulated
/// with byte-range locks, and a directory shared by several hosts needs a lease kept in
/// the storage itself instead).
enum StateDirectoryLock {
    /// The state directories this process holds, by device and inode, with their open descriptors.
    private static let held = Mutex<[FileKey: Int32]>([:])

    private struct FileKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// Takes the lock of `directory` for this process, unless it holds it already.
    ///
    /// - Throws: ``ReceiverSetupError/stateDirectoryInUse(_:)`` when another process holds
    ///   it; ``ReceiverSetupError/resumableStorageUnusable(_:reason:)`` when the directory
    ///   cannot be opened or locked.
    static func take(_ directory: String) throws {
        try held.withLock { held in
            let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw ReceiverSetupError.resumableStorageUnusable(directory, reason: "cannot open it to lock it (\(String(cString: strerror(errno))))")
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let failure = errno
                close(descriptor)
                throw ReceiverSetupError.resumableStorageUnusable(directory, reason: "cannot read it to lock it (\(String(cString: strerror(failure))))")
            }
            let key = FileKey(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
            if held[key] != nil {
                close(descriptor)
                return
            }
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let failure = errno
                if failure == EINTR { continue }
                close(descriptor)
                if failure == EWOULDBLOCK { throw ReceiverSetupError.stateDirectoryInUse(directory) }
                throw ReceiverSetupError.resumableStorageUnusable(directory, reason: "cannot lock it (\(String(cString: strerror(failure))))")
            }
            held[key] = descriptor
        }
    }
}
