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
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot create a file in \(directory)", errno: errno) }
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
                    throw ReceiverFailure.storing("writing an upload failed", errno: errno)
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
            throw ReceiverFailure.storing("setting the mode of an upload failed", errno: errno)
        }
        guard rename(partialPath, directory + "/" + storedName) == 0 else {
            unlink(partialPath)
            throw ReceiverFailure.storing("storing an upload failed", errno: errno)
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
    /// The file system is full (or the quota reached): 507.
    case insufficientStorage(String)
    case storage(String)
    case methodNotAllowed(String)
    case unsupportedMediaType(String)
}

extension ReceiverFailure {
    /// A failure to store an upload: ``insufficientStorage(_:)`` when the file system is
    /// full or the quota reached, else ``storage(_:)``; `what` and the system's message are
    /// kept for the log.
    static func storing(_ what: String, errno code: Int32) -> ReceiverFailure {
        let detail = "\(what): \(String(cString: strerror(code)))"
        return code == ENOSPC || code == EDQUOT ? .insufficientStorage(detail) : .storage(detail)
    }
}
