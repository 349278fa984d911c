#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart
import NIOCore
import NIOPosix

/// Writes one uploaded file aside (`.partial-…`, readable by its owner only), hashing as
/// it goes, and gives it its final name and mode only once complete. The final name is
/// random; nothing of the client's filename is ever part of a path.
///
/// The buffers received (slices of the connection's own, not copies) are written in
/// batches by a ``BatchedFileWriter``, and every file operation (open, write, mode, rename)
/// runs on NIO's thread pool: a slow or stalled disk blocks one of its threads, never the
/// Swift concurrency pool that every request's handler needs.
package struct FileSink {
    let directory: String
    let storedName: String
    private let partialPath: String
    private let descriptor: Int32
    private let mode: UInt16
    private let synced: Bool
    private let threadPool: NIOThreadPool
    private var hasher = SHA256Hasher()
    private var writer: BatchedFileWriter
    private(set) var size: Int64 = 0

    /// The prefix of files being written; ``UploadReceiver`` sweeps stale ones at start.
    static let partialPrefix = ".partial-"

    /// Creates the partial file of a new upload in `directory`; `synced`: its bytes are
    /// synced to the disk before it is renamed into place (``ReceiptDurability/synced``).
    static func create(directory: String, mode: UInt16, synced: Bool, threadPool: NIOThreadPool = .singleton) async throws -> FileSink {
        let name = UploadStore.randomName()
        let partialPath = directory + "/" + partialPrefix + name
        let descriptor = try await threadPool.runIfActive {
            let descriptor = open(partialPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot create a file in \(directory)", errno: errno) }
            return descriptor
        }
        return FileSink(descriptor: descriptor, partialPath: partialPath, directory: directory, storedName: name, mode: mode, synced: synced,
                        threadPool: threadPool)
    }

    /// A sink writing through `descriptor`, already open at `partialPath`, which
    /// ``complete()`` renames to `directory/storedName` (after syncing it, when `synced`).
    package init(descriptor: Int32, partialPath: String, directory: String, storedName: String, mode: UInt16, synced: Bool = false,
                 threadPool: NIOThreadPool = .singleton) {
        self.descriptor = descriptor
        self.partialPath = partialPath
        self.directory = directory
        self.storedName = storedName
        self.mode = mode
        self.synced = synced
        self.threadPool = threadPool
        self.writer = BatchedFileWriter(descriptor: descriptor, threadPool: threadPool)
    }

    /// Takes `bytes` (keeping the buffer, not a copy); writes once a batch is full.
    package mutating func write(_ bytes: ByteBuffer) async throws {
        bytes.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        size += Int64(bytes.readableBytes)
        try await writer.write(bytes)
    }

    /// Writes what is left, syncs it (when the sink is synced), closes the file and moves
    /// it to its final name; returns its SHA-256 in hexadecimal. On failure the partial
    /// file is removed. The directory is not synced here: once per request, by the caller.
    package mutating func complete() async throws -> String {
        do {
            try await writer.flush()
        } catch {
            discard()
            throw error
        }
        let (descriptor, mode, partialPath, synced) = (self.descriptor, self.mode, self.partialPath, self.synced)
        let finalPath = directory + "/" + storedName
        try await threadPool.runIfActive {
            if synced {
                do {
                    try FileSync.data(descriptor)
                } catch {
                    close(descriptor)
                    unlink(partialPath)
                    throw error
                }
            }
            let modeSet = fchmod(descriptor, mode_t(mode)) == 0
            let code = errno
            close(descriptor)
            guard modeSet else {
                unlink(partialPath)
                throw ReceiverFailure.storing("setting the mode of an upload failed", errno: code)
            }
            guard rename(partialPath, finalPath) == 0 else {
                let code = errno
                unlink(partialPath)
                throw ReceiverFailure.storing("storing an upload failed", errno: code)
            }
        }
        return Hexadecimal.string(hasher.finalize())
    }

    /// Closes and removes the partial file.
    func discard() {
        close(descriptor)
        unlink(partialPath)
    }
}
