#if os(Linux)
import Foundation
import Glibc

/// A file that takes all the room left on a small file system (a ``TmpfsMount``) but
/// `room` bytes, so that a write past them fails with ENOSPC; ``remove()`` gives the room back.
final class DiskFiller {
    let path: String

    /// Fills the file system of `directory`, then gives `room` bytes back.
    init(in directory: String, leaving room: Int) throws {
        path = directory + "/filler-" + UUID().uuidString
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Subprocess.Failure(description: "creating \(path) failed: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0xA5, count: 64 << 10)
        var size = 0
        while true {
            let count = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                size += count
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno != ENOSPC {
                throw Subprocess.Failure(description: "filling \(path) failed: \(String(cString: strerror(errno)))")
            } else {
                break
            }
        }
        guard ftruncate(descriptor, off_t(max(0, size - room))) == 0 else {
            throw Subprocess.Failure(description: "making room in \(path) failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Removes the file: its room is free again.
    func remove() {
        unlink(path)
    }
}
#endif
