#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where `-o PATH` writes, as curl does: `-` is standard output; any other path is opened
/// and written through — created if missing, truncated if it exists. A device stays a
/// device, a symbolic link still points where it did (its target is written), a FIFO's
/// reader gets the bytes. Nothing is ever replaced by a new file.
enum OutputFile {
    /// A failure to open or write the output: curl's exit 23.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens `path` for writing (`-` for standard output).
    static func open(_ path: String) throws -> FileHandle {
        if path == "-" { return FileHandle.standardOutput }
        #if canImport(Darwin)
        let descriptor = Darwin.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        #elseif canImport(Glibc)
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        #elseif canImport(Musl)
        let descriptor = Musl.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        #endif
        guard descriptor >= 0 else {
            throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Writes `bytes` to `path` (`-` for standard output).
    static func write(_ bytes: [UInt8], to path: String) throws {
        let handle = try open(path)
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw Failure(description: "cannot write \(path): \(error.localizedDescription)")
        }
    }
}
