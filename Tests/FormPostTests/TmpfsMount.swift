#if os(Linux)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs the test mounts (root with the right to mount, as CI runs), to fill a file
/// system for real; unmounted when released. Linux only: `mount(2)` and `umount2(2)` as
/// called here are Linux's.
final class TmpfsMount: Sendable {
    let path: String

    /// Mounts a tmpfs of `kibibytes` at a new directory, or fails saying why.
    init(kibibytes: Int) throws {
        path = NSTemporaryDirectory() + "formpost-tmpfs-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(kibibytes)k,mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: path)
            throw Subprocess.Failure(description: "mounting a tmpfs failed (\(reason)): run the tests as root, as CI does")
        }
    }

    deinit {
        umount2(path, Int32(MNT_DETACH))
        try? FileManager.default.removeItem(atPath: path)
    }
}
#endif
