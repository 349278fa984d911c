#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import Multipart

/// The tus uploads on disk, under `directory/.tus/`: `ID.json` (``TusUploadInfo``) and
/// `ID.data` (the bytes so far; its size is the upload's offset). A complete upload's
/// data is moved into `directory` under a random name, as a multipart file is stored.
/// Every method blocks on the file system: call them on NIO's thread pool.
struct TusStore: Sendable {
    /// Where completed files go.
    let directory: String
    /// Where uploads in progress live.
    let stateDirectory: String
    /// The permissions of completed files.
    let fileMode: UInt16

    init(directory: String, fileMode: UInt16) throws {
        self.directory = directory
        self.stateDirectory = directory + "/.tus"
        self.fileMode = fileMode
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
    }

    /// Whether `id` is one this store could have made (32 hexadecimal digits): anything
    /// else never reaches a path.
    static func isValidID(_ id: Substring) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    func infoPath(_ id: String) -> String { stateDirectory + "/" + id + ".json" }
    func dataPath(_ id: String) -> String { stateDirectory + "/" + id + ".data" }

    /// Creates an upload of `info`, with no bytes yet; returns its id.
    func create(_ info: TusUploadInfo) throws -> String {
        let id = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let descriptor = open(dataPath(id), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot create an upload in \(stateDirectory)", errno: errno) }
        close(descriptor)
        try save(info, id: id)
        return id
    }

    /// The upload `id`, or nil when there is none.
    func load(_ id: String) -> TusUploadInfo? {
        guard let data = FileManager.default.contents(atPath: infoPath(id)) else { return nil }
        return try? JSONDecoder().decode(TusUploadInfo.self, from: data)
    }

    /// Saves `info` atomically (written aside, then renamed): a server killed meanwhile
    /// leaves the old or the new, never a torn file.
    func save(_ info: TusUploadInfo, id: String) throws {
        let data = try JSONEncoder().encode(info)
        let temporary = infoPath(id) + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot save an upload's state", errno: errno) }
        defer { close(descriptor) }
        try data.withUnsafeBytes { try DescriptorWrites.writeAll($0, to: descriptor, what: "saving an upload's state failed") }
        guard rename(temporary, infoPath(id)) == 0 else {
            throw ReceiverFailure.storing("saving an upload's state failed", errno: errno)
        }
    }

    /// The bytes of `id` on disk: its offset.
    func offset(_ id: String) -> Int64 {
        var status = stat()
        return stat(dataPath(id), &status) == 0 ? Int64(status.st_size) : 0
    }

    /// Opens `id`'s data for appending.
    func openForAppend(_ id: String) throws -> Int32 {
        let descriptor = open(dataPath(id), O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot open an upload", errno: errno) }
        return descriptor
    }

    /// Moves the complete data of `id` into the directory under a random name, with its
    /// SHA-256 (`sha256`, or read from the file when nil), and records it; returns the info saved.
    func complete(_ id: String, info: TusUploadInfo, sha256 known: String?) throws -> TusUploadInfo {
        let sha256 = try known ?? Self.sha256(ofFileAt: dataPath(id))
        let storedName = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        guard chmod(dataPath(id), mode_t(fileMode)) == 0, rename(dataPath(id), directory + "/" + storedName) == 0 else {
            throw ReceiverFailure.storing("storing an upload failed", errno: errno)
        }
        let metadata = info.metadataValues
        var done = info
        done.file = Receipt.File(name: "file", filename: metadata["filename"] ?? metadata["name"] ?? id,
                                 contentType: metadata["filetype"] ?? metadata["type"], size: info.length, sha256: sha256, storedAs: storedName)
        try save(done, id: id)
        return done
    }

    /// Removes `id`: its state, its data, and with `storedFile` the file it completed.
    func remove(_ id: String, storedFile: Bool) {
        if storedFile, let stored = load(id)?.file?.storedAs { unlink(directory + "/" + stored) }
        unlink(dataPath(id))
        unlink(infoPath(id))
    }

    /// The ids of every upload kept.
    func ids() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
    }

    private static func sha256(ofFileAt path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot read an upload", errno: errno) }
        defer { close(descriptor) }
        var hasher = SHA256()
        var block = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ReceiverFailure.storing("reading an upload failed", errno: errno) }
            if count == 0 { break }
            block.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
