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

extension BodyPlan {
    /// The whole body in memory. With a known length it is produced into a single
    /// allocation of exactly ``contentLength`` bytes. Files are read on threads of their own,
    /// never on the Swift concurrency pool — but a body of at most 256 KiB whose file bytes
    /// the page cache holds is copied right there, as ``encodedBytes()`` does, and so is a
    /// body without files or streams, whatever its size: copying bytes already in memory
    /// waits for nothing, so it runs on the Swift concurrency pool's thread that runs this
    /// call (never on the caller's actor), as a copy of your own would (about 0.5 s per GiB
    /// here).
    public func encodedData() async throws -> Data {
        guard !hasStreams, let length = contentLength else {
            return try await BlockingIOExecutor.run { try await produceStreamedData() }
        }
        return try await produceWithoutStreams(length: length) { try produceData(length: length, cachedOnly: $0) }
    }

    /// Runs `produce` where a body without streams is produced: right here when it has no
    /// files, or when it is at most ``inlineEncodingLimit`` and `produce(true)` (file bytes
    /// from the page cache only) succeeds; otherwise `produce(false)` on the blocking-I/O
    /// threads. `produce(false)` never answers nil.
    private func produceWithoutStreams<T: Sendable>(length: Int64, _ produce: (_ cachedOnly: Bool) throws -> T?) async throws -> T {
        if !hasFiles { return try produce(false)! }
        if length <= Self.inlineEncodingLimit, let value = try produce(true) { return value }
        return try await BlockingIOExecutor.run { try produce(false)! }
    }

    /// Whether a part's content comes from a stream.
    private var hasStreams: Bool {
        segments.contains { if case .stream = $0 { return true } else { return false } }
    }

    /// Whether a part's content comes from a file.
    private var hasFiles: Bool {
        segments.contains { if case .file = $0 { return true } else { return false } }
    }

    /// A body with stream parts, or of unknown length, chunk after chunk.
    private func produceStreamedData() async throws -> Data {
        let reader = makeChunkReader()
        guard let length = contentLength else {
            var data = Data()
            while let chunk = try await reader.next() { data.append(contentsOf: chunk) }
            return data
        }
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(length), alignment: 16)
        do {
            var filled = 0
            while filled < memory.count {
                let count = try await reader.read(into: UnsafeMutableRawBufferPointer(rebasing: memory[filled...]))
                if count == 0 { break }
                filled += count
            }
            guard filled == memory.count else {
                throw MultipartError.malformedBody(reason: "the body ended after \(filled) of \(memory.count) planned bytes")
            }
        } catch {
            memory.deallocate()
            throw error
        }
        return Self.data(owning: memory)
    }

    /// The body without stream parts, produced into one allocation of `length` bytes that
    /// the returned `Data` owns; with `cachedOnly`, nil where file bytes would have to come
    /// from the disk.
    private func produceData(length: Int64, cachedOnly: Bool) throws -> Data? {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(length), alignment: 16)
        do {
            guard try fill(memory, cachedOnly: cachedOnly) else {
                memory.deallocate()
                return nil
            }
        } catch {
            memory.deallocate()
            throw error
        }
        return Self.data(owning: memory)
    }

    /// A `Data` that frees `memory` when it goes.
    private static func data(owning memory: UnsafeMutableRawBufferPointer) -> Data {
        guard let base = memory.baseAddress else { return Data() }
        return Data(bytesNoCopy: base, count: memory.count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// The most bytes a body may have to be encoded by ``encodedBytes()`` on the calling
    /// task, when its files' bytes are all in the page cache: copying them costs less than
    /// the two thread switches of a hop to the blocking-I/O threads.
    static let inlineEncodingLimit: Int64 = 256 << 10

    /// The whole body as bytes. Without stream parts it is produced straight into one array
    /// of exactly ``contentLength`` bytes; with them it goes through ``encodedData()``.
    /// Files are read on threads of their own, never on the Swift concurrency pool — but a
    /// body of at most 256 KiB whose file bytes the page cache holds is copied right there,
    /// without waiting for the disk, and so is a body without files, whatever its size.
    public func encodedBytes() async throws -> [UInt8] {
        guard !hasStreams, let length = contentLength else { return Array(try await encodedData()) }
        return try await produceWithoutStreams(length: length) { try produceBytes(length: length, cachedOnly: $0) }
    }

    /// The body, produced into one array of `length` bytes; with `cachedOnly`, nil where
    /// file bytes would have to come from the disk.
    private func produceBytes(length: Int64, cachedOnly: Bool) throws -> [UInt8]? {
        var complete = true
        let bytes = try [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, initialized in
            complete = try fill(UnsafeMutableRawBufferPointer(buffer), cachedOnly: cachedOnly)
            initialized = complete ? buffer.count : 0
        }
        return complete ? bytes : nil
    }

    /// Fills `buffer`, of exactly ``contentLength`` bytes, with the body (which has no
    /// stream parts); false, with `buffer` partly filled, when `cachedOnly` and file bytes
    /// would have to come from the disk.
    ///
    /// - Throws: ``MultipartError/malformedBody(reason:)`` when the parts produce fewer or
    ///   more bytes than planned (a file that changed), or any error reading a file.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer, cachedOnly: Bool) throws -> Bool {
        let reader = makeChunkReader()
        let read = cachedOnly ? reader.readCachedWithoutSuspending(into:) : reader.readWithoutSuspending(into:)
        let filled = try read(buffer)
        // One more read runs the last segment's end checks; it must find nothing left.
        var probe: UInt8 = 0
        let extra = try withUnsafeMutableBytes(of: &probe) { try read($0) }
        if cachedOnly, filled < buffer.count, !reader.isFinished { return false }
        guard filled == buffer.count, extra == 0, reader.isFinished else {
            throw MultipartError.malformedBody(reason: "the body ended after \(filled) of \(buffer.count) planned bytes")
        }
        return true
    }

    /// Writes the body to a new file at `path`, copying file regions through one 1 MiB buffer,
    /// on threads of its own (never the Swift concurrency pool).
    ///
    /// - Throws: ``MultipartError/outputExists(path:)`` when `path` exists (it is never
    ///   overwritten), ``MultipartError/outputFailed(path:errno:)``, or any error producing
    ///   the body; on any failure the partial file is removed.
    public func write(toFile path: String) async throws {
        let output = try SystemFile.createExclusively(path: path)
        do {
            try await write(to: output, name: path)
            output.close()
        } catch {
            output.close()
            unlink(path)
            throw error
        }
    }

    /// Writes the body through `descriptor`, an open file, device, pipe or socket, from its
    /// current position; the descriptor stays open. This is how `curl -o` writes: a device
    /// stays a device, a symbolic link still points where it did, a FIFO's reader gets the
    /// bytes. A reader that is slow or gone blocks a thread of the encoders' own, never the
    /// Swift concurrency pool. (MultipartFoundation adds the same for a `FileHandle`.)
    ///
    /// - Throws: ``MultipartError/outputFailed(path:errno:)`` (the path given as
    ///   `descriptor N`), or any error producing the body.
    public func write(toDescriptor descriptor: Int32) async throws {
        try await write(to: SystemFile(descriptor: descriptor), name: "descriptor \(descriptor)")
    }

    private func write(to output: SystemFile, name: String) async throws {
        try await BlockingIOExecutor.run { try await copySegments(to: output, name: name) }
    }

    /// Writes every segment through one 1 MiB buffer, placed for each segment at the
    /// output's position modulo a cache line: the kernel's copy from the buffer into the
    /// page cache then runs aligned, which a file part after its header block otherwise
    /// never is (a `pread`/`write` loop copying 1 GiB after a 150-byte header ran 9% faster
    /// so, as fast as one without the header).
    private func copySegments(to output: SystemFile, name: String) async throws {
        let line = 64, size = 1 << 20
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: size + line, alignment: line)
        defer { memory.deallocate() }
        var position = Int64(max(0, lseek(output.descriptor, 0, SEEK_CUR)))
        for segment in segments {
            let shift = Int(position % Int64(line))
            try await write(segment, to: output, path: name, scratch: UnsafeMutableRawBufferPointer(rebasing: memory[shift..<shift + size]))
            position = segment.length.map { position + $0 } ?? Int64(max(0, lseek(output.descriptor, 0, SEEK_CUR)))
        }
    }

    private func write(_ segment: BodySegment, to output: SystemFile, path: String, scratch: UnsafeMutableRawBufferPointer) async throws {
        switch segment {
        case .bytes(let bytes):
            let written = bytes.withUnsafeBytes { output.writeAll($0) }
            guard written else { throw MultipartError.outputFailed(path: path, errno: errno) }
        case .file(let region) where !region.needsContentCheck:
            let source = try region.openFile()
            defer { source.close() }
            let copied = output.copy(from: source, offset: region.offset, length: region.length, scratch: scratch)
            if copied < 0 { throw MultipartError.outputFailed(path: path, errno: errno) }
            try region.verifySize(of: source)
            if copied < region.length {
                throw MultipartError.fileSizeChanged(part: region.part, path: region.path, expected: region.fileSize, actual: region.offset + copied)
            }
        default:
            let reader = BodyPlan(boundary: boundary, segments: [segment]).makeChunkReader()
            while true {
                let count = try await reader.read(into: scratch)
                if count == 0 { break }
                let written = output.writeAll(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                guard written else { throw MultipartError.outputFailed(path: path, errno: errno) }
            }
        }
    }
}
