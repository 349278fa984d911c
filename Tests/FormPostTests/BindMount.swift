#if os(Linux)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A directory mounted a second time at a new path with `mount --bind` (root with the
/// right to mount, as CI runs): one file system, one device number, yet a link or rename
/// from one mount to the other fails with `EXDEV`. Unmounted when released. Linux only.
final class BindMount: Sendable {
    let path: String

    /// Mounts `source` at a new directory, or fails saying why.
    init(of source: String) throws {
        path = NSTemporaryDirectory() + "formpost-bind-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard mount(source, path, nil, UInt(MS_BIND), nil) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: path)
            throw Subprocess.Failure(description: "bind-mounting \(source) failed (\(reason)): run the tests as root, as CI does")
        }
    }

    deinit {
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }
}
#endif
