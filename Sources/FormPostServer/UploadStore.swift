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

/// Resumable uploads on disk, under a hidden directory of the receiver's (`.tus/` for tus,
/// `.resumable/` for the IETF draft): `ID.json` (what the protocol keeps of the upload) and
/// `ID.data` (the bytes so far; its size is the upload's offset). A complete upload's data
/// is moved into the receiver's directory under a random name, as a multipart file is
/// stored. Every method blocks on the file system: call them on NIO's thread pool.
struct UploadStore: Sendable {
    /// Where completed files go.
    let directory: String
    /// Where uploads in progress live.
    let stateDirectory: String
    /// The permissions of completed files.
    let fileMode: UInt16

    init(directory: String, stateName: String, fileMode: UInt16) throws {
        self.directory = directory
        self.stateDirectory = directory + "/" + stateName
        self.fileMode = fileMode
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
    }

    /// Whether `id` is one this store could have made (32 hexadecimal digits): anything
    /// else never reaches a path.
    static func isValidID(_ id: Substring) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A new random name: 32 hexadecimal digits.
    static func randomName() -> String {
        UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    func infoPath(_ id: String) -> String { stateDirectory + "/" + id + ".json" }
    func dataPath(_ id: String) -> String { stateDirectory + "/" + id + ".data" }

    /// Creates an upload described by `info`, with no bytes yet; returns its id.
    func create(_ info: some Encodable) throws -> String {
        let id = Self.randomName()
        let descriptor = open(dataPath(id), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot create an upload in \(stateDirectory)", errno: errno) }
        close(descriptor)
        try save(info, id: id)
        return id
    }

    /// What is kept of the upload `id`, or nil when there is none.
    func load<Info: Decodable>(_ id: String, as type: Info.Type) -> Info? {
        guard let data = FileManager.default.contents(atPath: infoPath(id)) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    /// Saves `info` atomically (written aside, then renamed): a server killed meanwhile
    /// leaves the old or the new, never a torn file.
    func save(_ info: some Encodable, id: String) throws {
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

    /// Cuts `id`'s data back to `offset` bytes: an append that must not count is undone.
    func cutBack(_ id: String, to offset: Int64) throws {
        guard truncate(dataPath(id), off_t(offset)) == 0 else {
            throw ReceiverFailure.storing("undoing an append failed", errno: errno)
        }
    }

    /// Moves the complete data of `id` into the directory under a random name, readable
    /// as the receiver's files are; returns the name and the data's SHA-256 (`known`, or
    /// read from the file when nil).
    func storeData(_ id: String, sha256 known: String?) throws -> (storedAs: String, sha256: String) {
        let sha256 = try known ?? Self.sha256(ofFileAt: dataPath(id))
        let storedName = Self.randomName()
        guard chmod(dataPath(id), mode_t(fileMode)) == 0, rename(dataPath(id), directory + "/" + storedName) == 0 else {
            throw ReceiverFailure.storing("storing an upload failed", errno: errno)
        }
        return (storedName, sha256)
    }

    /// Removes the bytes of `id` (its state stays).
    func removeData(_ id: String) {
        unlink(dataPath(id))
    }

    /// Removes `id`: its state and its data; and `storedFile`, a file it completed.
    func remove(_ id: String, storedFile: String? = nil) {
        if let storedFile { unlink(directory + "/" + storedFile) }
        unlink(dataPath(id))
        unlink(infoPath(id))
    }

    /// How many uploads are in progress: those whose data is still here.
    func inProgressCount() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).count { $0.hasSuffix(".data") }
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
        return Hexadecimal.string(hasher.finalize())
    }
}
