#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CMultipartSystem

/// A thin wrapper over a POSIX file descriptor: the only place the module opens, reads,
/// writes and closes files. Callers own the descriptor and call ``close()``.
package struct SystemFile {
    package let descriptor: Int32

    /// The file open as `descriptor`.
    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// What `stat` says of a path that names a readable regular file.
    struct Status: Equatable, Sendable {
        var size: Int64
        var identity: FileIdentity
    }

    /// Checks that `path` is an existing, readable regular file and returns its status.
    /// A FIFO, a device or a directory is refused before it is opened (opening a FIFO for
    /// reading would wait for a writer), and the open itself never waits.
    static func inspect(path: String) throws -> Status {
        var info = stat()
        guard stat(path, &info) == 0 else { throw openError(path: path, code: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw MultipartError.notARegularFile(path: path) }
        let (file, status) = try openRegularFile(path: path)
        file.close()
        return status
    }

    /// Opens `path` read-only without waiting (a FIFO swapped in would otherwise block),
    /// mapping the common failures to clear errors; refuses anything but a regular file.
    static func openForReading(path: String) throws -> SystemFile {
        try openRegularFile(path: path).file
    }

    /// Opens `path` as ``openForReading(path:)`` does, with its size and identity as the
    /// same `fstat` found them.
    static func openRegularFile(path: String) throws -> (file: SystemFile, status: Status) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw openError(path: path, code: errno) }
        let file = SystemFile(descriptor: descriptor)
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            file.close()
            throw MultipartError.notARegularFile(path: path)
        }
        return (file, Status(info))
    }

    private static func openError(path: String, code: Int32) -> MultipartError {
        switch code {
        case ENOENT, ENOTDIR: return MultipartError.fileNotFound(path: path)
        case EISDIR: return MultipartError.notARegularFile(path: path)
        default: return MultipartError.fileNotReadable(path: path, errno: code)
        }
    }

    /// The open file's size and identity, or nil with `errno` set.
    func status() -> Status? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Status(info)
    }
}

extension SystemFile.Status {
    /// The size and identity `info` records.
    init(_ info: stat) {
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        #else
        let modified = info.st_mtim
        #endif
        // dev_t is a signed Int32 on Darwin (UInt64 on Linux): keep its bits, never trap on a negative one.
        #if canImport(Darwin)
        let device = UInt64(UInt32(bitPattern: info.st_dev))
        #else
        let device = UInt64(info.st_dev)
        #endif
        let identity = FileIdentity(device: device, inode: UInt64(info.st_ino),
                                    modificationSeconds: Int64(modified.tv_sec), modificationNanoseconds: Int64(modified.tv_nsec))
        self.init(size: Int64(info.st_size), identity: identity)
    }
}

extension SystemFile {

    /// Creates `path` for writing; refuses an existing file.
    static func createExclusively(path: String) throws -> SystemFile {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw MultipartError.outputExists(path: path) }
            throw MultipartError.outputFailed(path: path, errno: code)
        }
        return SystemFile(descriptor: descriptor)
    }

    /// The current size of the open file, or nil with `errno` set.
    func currentSize() -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`, retrying on EINTR.
    /// Returns the count read (0 at end of file) or -1 with `errno` set.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Reads like ``read(into:at:)``, but only what the page cache holds: -1 with `errno`
    /// `EAGAIN` where the bytes would have to wait for the disk. Off Linux (no `preadv2`
    /// with `RWF_NOWAIT`) it is always `EAGAIN`, so every read goes to the thread pool:
    /// correct, one hop more per chunk.
    func readCached(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        return cmultipart_pread_cached(descriptor, base, buffer.count, offset)
    }

    /// Writes all of `buffer`, retrying on EINTR and short writes. Returns false with `errno` set on failure.
    package func writeAll(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < buffer.count {
            let count = write(descriptor, buffer.baseAddress! + done, buffer.count - done)
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += count
        }
        return true
    }

    /// Copies `length` bytes from `source` at `offset` to this file's current position
    /// through `scratch`. (`copy_file_range` was measured slower here: the destination is
    /// never block-aligned after a part's header block, so the kernel cannot share extents.)
    /// Returns the count copied, which is less than `length` only at the source's end,
    /// or -1 with `errno` set.
    func copy(from source: SystemFile, offset: Int64, length: Int64, scratch: UnsafeMutableRawBufferPointer) -> Int64 {
        var copied: Int64 = 0
        while copied < length {
            let want = Int(min(Int64(scratch.count), length - copied))
            let count = source.read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<want]), at: offset + copied)
            if count < 0 { return -1 }
            if count == 0 { return copied }
            guard writeAll(UnsafeRawBufferPointer(rebasing: scratch[0..<count])) else { return -1 }
            copied += Int64(count)
        }
        return copied
    }

    /// Closes the descriptor.
    package func close() {
        _ = systemClose(descriptor)
    }
}

@inline(__always)
private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    return Glibc.close(descriptor)
    #elseif canImport(Musl)
    return Musl.close(descriptor)
    #elseif canImport(Darwin)
    return Darwin.close(descriptor)
    #endif
}
