#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOPosix

/// The files of multipart forms as files of the receiver's directory (``FileSink``); with
/// ``ReceiptDurability/synced``, the directory is synced once per request before its receipt.
struct DirectoryFileStore: FormFileStore {
    let configuration: ReceiverConfiguration

    var bucket: String? { nil }

    func sink(contentType: String?) async throws -> any FormFileSink {
        try await FileSink.create(directory: configuration.directory, mode: configuration.storedFileMode, synced: configuration.durability == .synced)
    }

    func finish(stored: [String]) async throws {
        guard configuration.durability == .synced, !stored.isEmpty else { return }
        let directory = configuration.directory
        try await NIOThreadPool.singleton.runIfActive { try FileSync.directory(directory, what: "syncing the directory of stored files failed") }
    }

    func remove(stored: [String]) async {
        for name in stored { unlink(configuration.directory + "/" + name) }
    }
}
