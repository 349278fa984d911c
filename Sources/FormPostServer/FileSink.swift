#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation

/// Writes one uploaded file aside (`.partial-…`, readable by its owner only), hashing as
/// it goes, and gives it its final name and mode only once complete. The final name is
/// random; nothing of the client's filename is ever part of a path.
struct FileSink {
    let directory: String
    let storedName: String
    private let partialPath: String
    private let descriptor: Int32
    private let mode: UInt16
    private var hasher = SHA256()
    private(set) var size: Int64 = 0

    /// The prefix of files being written; ``UploadReceiver`` sweeps stale ones at start.
    static let partialPrefix = ".partial-"

    init(directory: String, mode: UInt16) throws {
        let name = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        self.directory = directory
        self.storedName = name
        self.partialPath = directory + "/" + Self.partialPrefix + name
        self.mode = mode
        descriptor = open(partialPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storage("cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
    }

    mutating func write(_ bytes: ArraySlice<UInt8>) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                #if canImport(Darwin)
                let count = Darwin.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                #elseif canImport(Glibc)
                let count = Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                #elseif canImport(Musl)
                let count = Musl.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                #endif
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ReceiverFailure.storage("writing an upload failed: \(String(cString: strerror(errno)))")
                }
                done += count
            }
            hasher.update(bufferPointer: buffer)
        }
        size += Int64(bytes.count)
    }

    /// Closes the file and moves it to its final name; returns its SHA-256 in hexadecimal.
    func complete() throws -> String {
        let modeSet = fchmod(descriptor, mode_t(mode)) == 0
        close(descriptor)
        guard modeSet else {
            unlink(partialPath)
            throw ReceiverFailure.storage("setting the mode of an upload failed: \(String(cString: strerror(errno)))")
        }
        guard rename(partialPath, directory + "/" + storedName) == 0 else {
            unlink(partialPath)
            throw ReceiverFailure.storage("storing an upload failed: \(String(cString: strerror(errno)))")
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Closes and removes the partial file.
    func discard() {
        close(descriptor)
        unlink(partialPath)
    }
}

/// Why a receiver refused or failed a request; each maps to an HTTP status.
enum ReceiverFailure: Error {
    case limitExceeded(ReceiverLimit, value: Int64)
    case storage(String)
    case methodNotAllowed(String)
    case unsupportedMediaType(String)
}
