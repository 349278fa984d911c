#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
import Multipart
import NIOCore

/// How a resumable form lies on disk while it arrives, so that each file part's content is
/// written once, straight to its own file: `ID.data` holds every byte of the form that is
/// not a file part's content (delimiters, header blocks, text fields), in order;
/// `ID.part-K` the content of the form's K-th file part; `ID.splices` where each of them
/// goes in `ID.data` (a 64-bit little-endian offset per file part, in order). The form is
/// `ID.data` with each `ID.part-K` put in at its splice; the upload's offset is the sum of
/// their sizes. A splice is written before its file part's file, after the bytes of
/// `ID.data` before it: whatever moment a server stops at, the files hold the form's first
/// bytes, in order. Completed, the parts' files are moved into the receiver's directory.
/// `ID.digests` holds the SHA-256 of the form's first file parts that ended (32 bytes each,
/// in order), noted when a parse is made again, so that the next one needs to read only
/// `ID.data`, not the parts' content.
struct FormSegments {
    let store: UploadStore
    let id: String

    var skeletonPath: String { store.dataPath(id) }
    var splicesPath: String { store.stateDirectory + "/" + id + ".splices" }
    func partPath(_ index: Int) -> String { store.stateDirectory + "/" + id + ".part-" + String(index) }
    /// The form's bytes as received in one file, while they are split into this layout.
    var rawPath: String { store.stateDirectory + "/" + id + ".raw" }
    /// The SHA-256 of the first file parts that ended, in order.
    var digestsPath: String { store.stateDirectory + "/" + id + ".digests" }

    /// Readies the form's files for this layout, unless they are in it (the splices file is
    /// there and no raw file): its bytes so far, in one file (`ID.data` as it was written
    /// before forms were split as they arrive, or an earlier attempt's raw file), become
    /// the raw file, to be split again from its start; returns its size, or nil when
    /// the form is in this layout. It blocks on the file system.
    ///
    /// - Throws: ``ReceiverFailure`` when the files cannot be made.
    func beginSplitting() throws -> Int64? {
        guard access(rawPath, F_OK) == 0 || access(splicesPath, F_OK) != 0 else { return nil }
        if access(rawPath, F_OK) != 0, rename(skeletonPath, rawPath) != 0, errno != ENOENT {
            throw ReceiverFailure.storing("cannot split an upload", errno: errno)
        }
        let count = splices().count
        for index in 0...count { unlink(partPath(index)) }
        unlink(digestsPath)
        for path in [skeletonPath, splicesPath, rawPath] {
            let descriptor = open(path, O_WRONLY | O_CREAT | (path == rawPath ? 0 : O_TRUNC) | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot split an upload", errno: errno) }
            close(descriptor)
        }
        return Self.size(of: rawPath)
    }

    /// Ends the splitting ``beginSplitting()`` began: the raw file goes.
    func endSplitting() {
        unlink(rawPath)
    }

    /// Where each file part goes in `ID.data` (only those whose splice was written; a torn
    /// last entry is none). It blocks on the file system.
    func splices() -> [Int64] {
        let descriptor = open(splicesPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size >= 8 else { return [] }
        var raw = [UInt8](repeating: 0, count: Int(status.st_size) / 8 * 8)
        let count = raw.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count == raw.count else { return [] }
        return stride(from: 0, to: raw.count, by: 8).map { start in
            raw[start..<(start + 8)].enumerated().reduce(Int64(0)) { $0 | Int64($1.element) << (8 * Int64($1.offset)) }
        }
    }

    /// The sizes of `ID.data` and of the first `parts` parts' files (0 for one not yet made).
    /// It blocks on the file system.
    func sizes(parts: Int) -> (skeleton: Int64, parts: [Int64]) {
        (Self.size(of: skeletonPath), (0..<parts).map { Self.size(of: partPath($0)) })
    }

    /// The upload's offset: the form's bytes on disk — while they are split again (a split
    /// that stopped midway: the raw file is there), all of the raw file's, which the split
    /// layout holds only the first of. It blocks on the file system.
    func offset() -> Int64 {
        let (skeleton, parts) = sizes(parts: splices().count)
        let split = parts.reduce(skeleton, +)
        var status = stat()
        guard stat(rawPath, &status) == 0 else { return split }
        return max(Int64(status.st_size), split)
    }

    /// The form's bytes on disk, in order, as extents of `ID.data` and the parts' files:
    /// `splices` and the sizes as read under the upload's lock.
    func extents(splices: [Int64], skeleton: Int64, parts: [Int64]) -> [StoredBody.Extent] {
        var extents: [StoredBody.Extent] = []
        var at: Int64 = 0
        for (index, splice) in splices.enumerated() {
            let end = min(max(splice, at), skeleton)
            if end > at { extents.append(StoredBody.Extent(path: skeletonPath, offset: at, length: end - at)) }
            at = end
            if parts[index] > 0 { extents.append(StoredBody.Extent(path: partPath(index), offset: 0, length: parts[index])) }
        }
        if skeleton > at { extents.append(StoredBody.Extent(path: skeletonPath, offset: at, length: skeleton - at)) }
        return extents
    }

    /// Writes the splice of the next file part: at `offset` in `ID.data`.
    ///
    /// - Throws: ``ReceiverFailure`` (507 for a full disk).
    func appendSplice(_ offset: Int64) throws {
        let descriptor = open(splicesPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot record a part of an upload", errno: errno) }
        defer { close(descriptor) }
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: offset >> (8 * Int64($0))) }
        let (written, failure) = bytes.withUnsafeBytes { DescriptorWrites.write($0, to: descriptor, what: "recording a part of an upload failed") }
        if let failure {
            // A torn entry counts for nothing; take it back so that the next one is whole.
            if written > 0 { _ = truncate(splicesPath, off_t(Self.size(of: splicesPath) - Int64(written))) }
            throw failure
        }
    }

    /// Opens the file of part `index` for appending, made if missing.
    func openPart(_ index: Int) throws -> Int32 {
        let descriptor = open(partPath(index), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing("cannot create a part of an upload", errno: errno) }
        return descriptor
    }

    /// Cuts `ID.data` back to `size` bytes (what a failed write left past it counts for nothing).
    func cutSkeleton(to size: Int64) {
        _ = truncate(skeletonPath, off_t(size))
    }

    /// Moves the file of part `index` into the receiver's directory as `storedAs`, with
    /// the receiver's mode: linked there, then removed. Nothing already stored under that
    /// name is ever replaced — it is a moving done before (a server stopped after it) — and
    /// an empty file part whose file was never made is made there, never here: a file made
    /// here while another request moves the part could not be told from the part. It
    /// blocks on the file system; call it under the upload's lock.
    func storePart(_ index: Int, as storedAs: String) throws {
        let source = partPath(index)
        let target = store.directory + "/" + storedAs
        guard access(source, F_OK) == 0 else {
            // Moved already, or an empty file part whose file was never made.
            let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor < 0, errno == EEXIST { return }
            guard descriptor >= 0 else { throw ReceiverFailure.storing("storing an upload failed", errno: errno) }
            defer { close(descriptor) }
            guard fchmod(descriptor, mode_t(store.fileMode)) == 0 else { throw ReceiverFailure.storing("storing an upload failed", errno: errno) }
            return
        }
        guard chmod(source, mode_t(store.fileMode)) == 0 else { throw ReceiverFailure.storing("storing an upload failed", errno: errno) }
        if link(source, target) != 0, errno != EEXIST {
            throw ReceiverFailure.storing("storing an upload failed", errno: errno)
        }
        // Linked now, or stored before under this name: the part's file goes either way.
        unlink(source)
    }

    /// Removes every file of the form in progress: `ID.data`, the parts' files and the
    /// splices (parts already moved into the directory stay). It blocks on the file system.
    func removeAll() {
        let count = splices().count
        for index in 0...count { unlink(partPath(index)) }
        unlink(splicesPath)
        unlink(skeletonPath)
        unlink(rawPath)
        unlink(digestsPath)
    }

    /// The SHA-256 noted of the form's first file parts that ended, in order, in
    /// hexadecimal (a torn last entry is none). It blocks on the file system.
    func digests() -> [String] {
        let bytes = Self.contents(of: digestsPath)
        return stride(from: 0, to: bytes.count / 32 * 32, by: 32).map { Hexadecimal.string(Array(bytes[$0..<($0 + 32)])) }
    }

    /// Notes `digests` (in hexadecimal) as those of the file parts after the `noted` ones
    /// already noted; a failure only means that they are not noted. It blocks on the file system.
    func noteDigests(_ digests: [String], after noted: Int) {
        guard !digests.isEmpty else { return }
        let bytes = digests.flatMap(Self.bytes(hexadecimal:))
        guard bytes.count == digests.count * 32 else { return }
        // What a torn entry left past the whole ones noted goes first.
        guard truncate(digestsPath, off_t(noted * 32)) == 0 || (noted == 0 && errno == ENOENT) else { return }
        let descriptor = open(digestsPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let (_, failure) = bytes.withUnsafeBytes { DescriptorWrites.write($0, to: descriptor, what: "noting a form's digests failed") }
        if failure != nil { _ = truncate(digestsPath, off_t(noted * 32)) }
    }

    /// The SHA-256 of the content of file part `index` (its file; empty when it has none),
    /// in hexadecimal, and the bytes read. It blocks on the file system.
    ///
    /// - Throws: ``ReceiverFailure`` when the file cannot be read.
    func digestOfPart(_ index: Int) throws -> (sha256: String, read: Int64) {
        let descriptor = open(partPath(index), O_RDONLY | O_CLOEXEC)
        var hasher = SHA256Hasher()
        guard descriptor >= 0 else {
            guard errno == ENOENT else { throw ReceiverFailure.storing("cannot read a part of an upload", errno: errno) }
            return (Hexadecimal.string(hasher.finalize()), 0)
        }
        defer { close(descriptor) }
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ReceiverFailure.storing("reading a part of an upload failed", errno: errno) }
            if count == 0 { break }
            total += Int64(count)
            block.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return (Hexadecimal.string(hasher.finalize()), total)
    }

    /// The bytes `text` (hexadecimal digits, two a byte) stands for; none for a digit that is not one.
    private static func bytes(hexadecimal text: String) -> [UInt8] {
        let digits = text.utf8.compactMap { digit -> UInt8? in
            switch digit {
            case 0x30...0x39: digit - 0x30
            case 0x61...0x66: digit - 0x61 + 10
            default: nil
            }
        }
        guard digits.count == text.utf8.count, digits.count % 2 == 0 else { return [] }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    private static func contents(of path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, $0.count, 0) }
        return count == bytes.count ? bytes : []
    }

    private static func size(of path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }
}
