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

/// Resumable uploads on disk, under a hidden directory of the receiver's (`.tus/` for tus,
/// `.resumable/` for the IETF draft), or under its configured state directory (`tus/`,
/// `resumable/`): `ID.json` (what the protocol keeps of the upload) and
/// `ID.data` (the bytes so far; its size is the upload's offset). A complete upload's data
/// is stored in the receiver's directory under a random name, as a multipart file is, in
/// steps a crash cannot tear (``complete(_:as:pending:done:)``). Every method blocks on the
/// file system: call them on NIO's thread pool.
///
/// What is acknowledged is on the disk, not only in the page cache (``FileSync``): a state
/// is saved by writing it aside, syncing it, renaming it and syncing the directory; the
/// bytes of an append are synced once at its end (``PipelinedFileWriter``), before its
/// offset is answered; a completed upload's stored file and the directory holding it are
/// synced before its state says complete. One process at a time keeps uploads in a state
/// directory (``StateDirectoryLock``).
package struct UploadStore: Sendable {
    /// Where completed files go.
    let directory: String
    /// Where uploads in progress live.
    let stateDirectory: String
    /// The permissions of completed files.
    let fileMode: UInt16
    /// What happens between the steps of a completion: nil, but in tests.
    var completionFault: CompletionFault?
    /// Where each completion records its upload's `post-finish` event, or nil for none.
    let events: UploadEventOutbox?
    /// The uploads kept here, in memory: taken from the state directory at start, and kept
    /// up to date as uploads are created, completed and removed.
    let census: UploadCensus
    /// The states found unreadable at start (torn, or not this store's), by path: their
    /// uploads' files are kept, for repair, and the receiver reports them
    /// (``UploadExpiry/startSweeping(_:locks:digests:logger:threadPool:)``).
    private(set) var unreadableStates: [String] = []

    /// A store for the protocol `name` (`tus`, `resumable`): in `stateRoot/name` when given,
    /// else in `directory/.name`, made if missing. Uploads left in `directory/.name` by a
    /// receiver without a state root are moved to it; what a creation stopped midway left
    /// (data without state) and states half saved are removed, and the ``census`` is taken.
    /// It blocks on the file system.
    ///
    /// - Throws: ``ReceiverSetupError/stateDirectoryInUse(_:)`` when another process keeps
    ///   uploads in the same state directory (``StateDirectoryLock``);
    ///   ``ReceiverSetupError/stateDirectoryOnAnotherFileSystem(_:)`` when
    ///   `stateRoot` is not on `directory`'s file system;
    ///   ``ReceiverSetupError/resumableStorageUnusable(_:reason:)`` when a completed upload
    ///   could not be linked into `directory`, or uploads not moved; errors of making the
    ///   directories.
    init(directory: String, stateRoot: String?, name: String, fileMode: UInt16, events: UploadEventOutbox? = nil) throws {
        self.directory = directory
        self.events = events
        let hidden = directory + "/." + name
        self.stateDirectory = stateRoot.map { $0 + "/" + name } ?? hidden
        self.fileMode = fileMode
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        try StateDirectoryLock.take(stateDirectory)
        try Self.probeLink(from: stateDirectory, to: directory)
        if stateDirectory != hidden {
            try Self.moveUploads(from: hidden, to: stateDirectory)
        }
        self.census = UploadCensus()
        unreadableStates = takeCensus()
    }

    /// The name of the file ``probeLink(from:to:)`` makes and removes, before its random part.
    static let linkProbePrefix = ".link-probe-"

    /// Links a new file of `stateDirectory` into `directory` and removes both, as storing a
    /// completed upload links its data: a state directory on another file system, or
    /// mounted apart from `directory` (a bind mount shares the device and still refuses
    /// links across it), or a file system without hard links is refused here, at start,
    /// rather than when the first upload completes.
    ///
    /// - Throws: ``ReceiverSetupError/stateDirectoryOnAnotherFileSystem(_:)`` when the link
    ///   crosses file systems (`EXDEV`); ``ReceiverSetupError/resumableStorageUnusable(_:reason:)``
    ///   when it fails otherwise.
    static func probeLink(from stateDirectory: String, to directory: String) throws {
        let name = linkProbePrefix + randomName()
        let source = stateDirectory + "/" + name, target = directory + "/" + name
        let descriptor = open(source, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ReceiverSetupError.resumableStorageUnusable(stateDirectory, reason: "cannot create a file in it (\(String(cString: strerror(errno))))")
        }
        close(descriptor)
        defer { unlink(source) }
        guard link(source, target) == 0 else {
            let failure = errno
            if failure == EXDEV { throw ReceiverSetupError.stateDirectoryOnAnotherFileSystem(stateDirectory) }
            throw ReceiverSetupError.resumableStorageUnusable(directory, reason: "cannot link a file of \(stateDirectory) into it, as completing an upload does (\(String(cString: strerror(failure))))")
        }
        unlink(target)
    }

    /// Moves the files of uploads in `old` (kept before a state directory was configured:
    /// names that begin with an upload's ID) to `new` by rename, then removes `old` if that
    /// emptied it. A file whose name `new` already holds stays, and so does anything else
    /// (the state directory itself, when it was put inside `old`).
    static func moveUploads(from old: String, to new: String) throws {
        guard access(old, F_OK) == 0 else { return }
        // A process still receiving in the hidden directory keeps its uploads there.
        try StateDirectoryLock.take(old)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: old)
        } catch {
            throw ReceiverSetupError.resumableStorageUnusable(new, reason: "cannot list \(old), whose uploads it should take (\(error))")
        }
        for name in names where isValidID(name.prefix { $0 != "." }) && access(new + "/" + name, F_OK) != 0 {
            guard rename(old + "/" + name, new + "/" + name) == 0 else {
                let failure = errno
                if failure == EXDEV { throw ReceiverSetupError.stateDirectoryOnAnotherFileSystem(new) }
                throw ReceiverSetupError.resumableStorageUnusable(new, reason: "cannot move \(old)/\(name) into it (\(String(cString: strerror(failure))))")
            }
        }
        rmdir(old)
    }

    /// Whether `id` is one this store could have made (32 hexadecimal digits): anything
    /// else never reaches a path.
    static func isValidID(_ id: Substring) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A new random name: 128 bits from the system's random source, as 32 lowercase
    /// hexadecimal digits (a UUID would give 122).
    package static func randomName() -> String {
        var generator = SystemRandomNumberGenerator()
        let bits = (generator.next() as UInt64, generator.next() as UInt64)
        let high = String(bits.0, radix: 16), low = String(bits.1, radix: 16)
        return String(repeating: "0", count: 16 - high.count) + high + String(repeating: "0", count: 16 - low.count) + low
    }

    func infoPath(_ id: String) -> String { stateDirectory + "/" + id + ".json" }
    func dataPath(_ id: String) -> String { stateDirectory + "/" + id + ".data" }

    /// Creates the upload `id` described by `info`, with no bytes yet: its data, then its
    /// state (a creation stopped between the two leaves data without state, which the next
    /// start removes), both on the disk when it returns (saving the state syncs the
    /// directory that holds them); the ``census`` entered it already, being created, and
    /// now knows it is.
    func create(_ info: some Encodable, id: String) throws {
        let descriptor = open(dataPath(id), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot create an upload in \(stateDirectory)", errno: errno) }
        close(descriptor)
        do {
            try save(info, id: id)
        } catch {
            unlink(dataPath(id))
            unlink(infoPath(id) + ".tmp")
            throw error
        }
        census.created(id)
    }

    /// What is kept of the upload `id`, or nil when there is none.
    func load<Info: Decodable>(_ id: String, as type: Info.Type) -> Info? {
        guard let data = FileManager.default.contents(atPath: infoPath(id)) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    /// Saves `info` atomically and durably: written aside, synced, renamed into place, and
    /// the state directory synced — a server killed or a machine stopped meanwhile leaves
    /// the old or the new, never a torn file, and once it returns the new one stays.
    func save(_ info: some Encodable, id: String) throws {
        let data = try JSONEncoder().encode(info)
        let temporary = infoPath(id) + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot save an upload's state", errno: errno) }
        defer { close(descriptor) }
        try data.withUnsafeBytes { try DescriptorWrites.writeAll($0, to: descriptor, what: "saving an upload's state failed") }
        try FileSync.data(descriptor, what: "saving an upload's state failed")
        guard rename(temporary, infoPath(id)) == 0 else {
            throw ReceiverFailure.storing("saving an upload's state failed", errno: errno)
        }
        try FileSync.directory(stateDirectory, what: "saving an upload's state failed")
    }

    /// Syncs the files of a resumable form `id` that an append wrote besides its parts'
    /// (``FormSegments``: `ID.data` and `ID.splices`, those there), and the state directory,
    /// where the append may have made files: once at the end of the append, before its
    /// offset is answered (the parts' files are synced by their writers).
    ///
    /// - Throws: ``ReceiverFailure`` when a sync fails.
    func syncForm(_ id: String) throws {
        let segments = FormSegments(store: self, id: id)
        for path in [segments.skeletonPath, segments.splicesPath] where access(path, F_OK) == 0 {
            try FileSync.file(path)
        }
        try FileSync.directory(stateDirectory)
    }

    /// Syncs the directory stored files are in: after files were moved or linked into it,
    /// before an answer names them.
    ///
    /// - Throws: ``ReceiverFailure`` when the sync fails.
    func syncStoredFiles() throws {
        try FileSync.directory(directory, what: "syncing the directory of stored files failed")
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

    /// Cuts `id`'s data back to `offset` bytes and syncs its size: an append that must not
    /// count is undone before a state that relies on it is saved.
    func cutBack(_ id: String, to offset: Int64) throws {
        let descriptor = open(dataPath(id), O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("undoing an append failed", errno: errno) }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(offset)) == 0 else {
            throw ReceiverFailure.storing("undoing an append failed", errno: errno)
        }
        try FileSync.data(descriptor, what: "undoing an append failed")
    }

    /// The size of `id`'s data, or nil when it has none (it was stored, or removed).
    func dataSize(_ id: String) -> Int64? {
        var status = stat()
        return stat(dataPath(id), &status) == 0 ? Int64(status.st_size) : nil
    }

    /// Gives the data of `id` the mode of stored files and links it into the directory as
    /// `completion.storedAs`; the name being taken already by the data itself (an earlier
    /// attempt's link) is no failure.
    func linkData(_ id: String, as completion: UploadCompletion) throws {
        let stored = directory + "/" + completion.storedAs
        guard chmod(dataPath(id), mode_t(fileMode)) == 0 else { throw ReceiverFailure.storing("storing an upload failed", errno: errno) }
        guard link(dataPath(id), stored) != 0 else { return }
        let failure = errno
        guard failure == EEXIST, Self.isSameFile(dataPath(id), stored) else {
            throw ReceiverFailure.storing("storing an upload failed", errno: failure)
        }
    }

    /// Whether `path` and `other` both exist and are one file (the same inode and size).
    static func isSameFile(_ path: String, _ other: String) -> Bool {
        var first = stat(), second = stat()
        guard stat(path, &first) == 0, stat(other, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino && first.st_size == second.st_size
    }

    /// Removes the bytes of `id` (its state stays): it is complete.
    func removeData(_ id: String) {
        unlink(dataPath(id))
        census.completed(id)
    }

    /// Removes `id`: its state and its data, and the file a completion that stopped midway
    /// may have linked into the directory, which no answer named. A file it completed stays.
    func remove(_ id: String) {
        if let unfinished = load(id, as: UnfinishedCompletion.self), unfinished.file == nil, unfinished.answer == nil,
           let completing = unfinished.completing {
            unlink(directory + "/" + completing.storedAs)
        }
        FormSegments(store: self, id: id).removeAll()
        unlink(dataPath(id))
        unlink(infoPath(id))
        census.remove(id)
    }

    /// What the files of `id` say of it now: its data's size while it is in progress
    /// (for a form, that of the file holding its first bytes — or, while its bytes are
    /// split again, of its raw bytes, which hold all it received: ``FormSegments``), complete
    /// when only its state is left, or gone. A few `stat`s; no state is read.
    func look(_ id: String) -> UploadCensus.Look {
        var status = stat()
        if stat(FormSegments(store: self, id: id).rawPath, &status) == 0 {
            // The split began by cutting `ID.data` back: the raw bytes are what was received.
            return .inProgress(bytes: max(Int64(status.st_size), dataSize(id) ?? 0))
        }
        if let size = dataSize(id) { return .inProgress(bytes: size) }
        return access(infoPath(id), F_OK) == 0 ? .complete : .gone
    }

    /// Marks the upload `id` active now (its data's modification time), as if it received a
    /// byte: a final upload while the partial uploads it awaits do. It blocks on the file
    /// system.
    func touch(_ id: String) {
        _ = utimensat(AT_FDCWD, dataPath(id), nil, 0)
    }

    /// When the upload `id` last received a byte or changed state, in seconds since 1970:
    /// the newest modification time of its files (its data — or, for a form, its raw
    /// bytes, the bytes besides its parts, its splices and its newest part's file — and its
    /// state); nil when it has none. A few `stat`s.
    func lastActivity(_ id: String) -> Double? {
        let segments = FormSegments(store: self, id: id)
        var paths = [dataPath(id), infoPath(id), segments.rawPath, segments.splicesPath]
        var status = stat()
        if stat(segments.splicesPath, &status) == 0, status.st_size >= 8 {
            paths.append(segments.partPath(Int(status.st_size / 8) - 1))
        }
        var newest: Double?
        for path in paths where stat(path, &status) == 0 {
            #if canImport(Darwin)
            let modified = Double(status.st_mtimespec.tv_sec) + Double(status.st_mtimespec.tv_nsec) / 1e9
            #else
            let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            #endif
            newest = max(newest ?? modified, modified)
        }
        return newest
    }

    /// Enters in the ``census`` the uploads in the state directory, each as its state says
    /// (the whole state is read, once, at start); removes the files of uploads without a
    /// state (a creation stopped between its data and its state) and states half saved.
    /// An unreadable state (torn, or not this store's) is left alone with its upload's
    /// files, for repair, and not counted; returns the paths of those. It blocks on the
    /// file system.
    func takeCensus() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []
        let states = Set(names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
        var entries: [String: UploadCensus.Entry] = [:]
        var unreadable: [String] = []
        for name in names.sorted() {
            if name.hasPrefix(Self.linkProbePrefix) {
                // Left by a start killed between making its probe and removing it.
                unlink(stateDirectory + "/" + name)
                continue
            }
            let id = String(name.prefix { $0 != "." })
            guard Self.isValidID(id[...]) else { continue }
            let path = stateDirectory + "/" + name
            if name.hasSuffix(".json.tmp") || !states.contains(id) {
                unlink(path)
                continue
            }
            guard name == id + ".json" else { continue }
            guard let data = FileManager.default.contents(atPath: path),
                  let record = try? JSONDecoder().decode(UploadRecord.self, from: data) else {
                unreadable.append(path)
                continue
            }
            let look = look(id)
            var entry = UploadCensus.Entry(client: record.client, created: record.created, active: lastActivity(id) ?? record.created)
            entry.complete = record.isComplete || look == .complete
            if case .inProgress(let bytes) = look { entry.received = bytes }
            entries[id] = entry
        }
        census.withEntries { $0 = entries }
        return unreadable
    }

    /// What the census takes of an upload's state, tus's or the IETF draft's.
    private struct UploadRecord: Decodable {
        /// A value that is there, whatever it holds.
        struct Present: Decodable {
            init(from decoder: any Decoder) {}
        }

        var created: Double
        var client: String?
        /// tus: the stored file, once complete.
        var file: Present?
        /// The IETF draft: the answer, once complete.
        var answer: Present?

        var isComplete: Bool { file != nil || answer != nil }
    }

    static func sha256(ofFileAt path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot read an upload", errno: errno) }
        defer { close(descriptor) }
        var hasher = SHA256Hasher()
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

/// What ``UploadStore/remove(_:)`` reads of an upload's state, tus's or the
/// draft's: a completion recorded, and whether it ended (a stored file, or an answer).
private struct UnfinishedCompletion: Decodable {
    var completing: UploadCompletion?
    var file: Receipt.File?
    var answer: StoredAnswer?
}
