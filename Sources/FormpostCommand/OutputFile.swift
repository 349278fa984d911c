#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// The caller closes it unless it is standard output.
    static func open(_ path: String) throws -> Descriptor {
        if path == "-" { return .standardOutput }
        do {
            return try Descriptor.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC)
        } catch {
            throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `bytes` to `path` (`-` for standard output).
    static func write(_ bytes: [UInt8], to path: String) throws {
        let descriptor = try open(path)
        defer { if path != "-" { descriptor.close() } }
        do {
            try descriptor.write(bytes)
        } catch {
            throw Failure(description: "cannot write \(path): \(error)")
        }
    }
}
