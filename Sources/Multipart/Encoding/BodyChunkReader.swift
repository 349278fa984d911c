#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Produces a planned body from its start, chunk by chunk, with memory bounded by the
/// chunk size whatever the parts weigh. Make a new reader (``BodyPlan/makeChunkReader(chunkSize:)``)
/// to produce the body again.
///
/// Integrity is checked as the body is produced: a file whose size changed, a stream
/// that yields more or fewer bytes than declared, or (with a caller-chosen boundary)
/// content that contains the delimiter makes the read throw, naming the part — the
/// bytes of the failing read are never returned.
///
/// A reader belongs to one task at a time.
public final class BodyChunkReader {
    private let segments: [BodySegment]
    private let delimiter: [UInt8]
    /// The size of the chunks ``next()`` returns.
    public let chunkSize: Int

    private var segmentIndex = 0
    private var offset: Int64 = 0
    private var file: SystemFile?
    private var stream: (any ByteChunkIterator)?
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private var scanner: DelimiterScanner?
    private var scratch: UnsafeMutableRawBufferPointer?

    init(plan: BodyPlan, chunkSize: Int) {
        self.segments = plan.segments
        self.delimiter = plan.boundary.delimiter
        self.chunkSize = max(1, chunkSize)
    }

    deinit {
        file?.close()
        scratch?.deallocate()
    }

    /// Whether the whole body has been produced.
    public var isFinished: Bool { segmentIndex >= segments.count }

    /// Whether the next bytes are a file's: reading them may wait for the disk, while the
    /// next bytes of memory never do and a stream's are awaited.
    package var isAtFile: Bool {
        guard segmentIndex < segments.count, case .file = segments[segmentIndex] else { return false }
        return true
    }

    /// Fills `buffer` with the body's next bytes and returns how many were written: always
    /// `buffer.count` until the body's last bytes, then fewer, then 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) async throws -> Int {
        try Task.checkCancellation()
        var filled = 0
        while true {
            filled += try readWithoutSuspending(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            guard filled < buffer.count, segmentIndex < segments.count, case .stream(let stream) = segments[segmentIndex] else {
                return filled
            }
            let count = try await produce(stream, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 {
                try advance()
            } else {
                filled += count
            }
        }
    }

    /// Fills `buffer` from in-memory bytes, files and bytes a stream already yielded, without
    /// suspending; it stops early where the next bytes must be awaited from a stream (then
    /// call ``read(into:)``) or at the end (``isFinished``). Returns the count written.
    package func readWithoutSuspending(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try fill(buffer, cachedOnly: false)
    }

    /// Fills `buffer` as ``readWithoutSuspending(into:)`` does, taking file bytes only from
    /// the page cache: it also stops early where the next file bytes would have to wait for
    /// the disk (then read them with ``readWithoutSuspending(into:)`` on a thread that may
    /// block). So it never blocks, and can run on an event loop.
    package func readCachedWithoutSuspending(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try fill(buffer, cachedOnly: true)
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer, cachedOnly: Bool) throws -> Int {
        var filled = 0
        while filled < buffer.count, segmentIndex < segments.count {
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])
            let count: Int
            switch segments[segmentIndex] {
            case .bytes(let bytes): count = copy(from: bytes, into: target)
            case .file(let region):
                guard let produced = try produce(region, into: target, cachedOnly: cachedOnly) else { return filled }
                count = produced
            case .stream:
                guard stream != nil, pendingOffset < pending.count else { return filled }
                count = copyPending(into: target)
            }
            if count == 0 {
                try advance()
            } else {
                filled += count
            }
        }
        return filled
    }

    private func advance() throws {
        try finishSegment(segments[segmentIndex])
        segmentIndex += 1
        offset = 0
    }

    /// The body's next chunk of ``chunkSize`` bytes (the last may be shorter), or nil at the end.
    public func next() async throws -> [UInt8]? {
        let buffer = scratch ?? UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        scratch = buffer
        let count = try await read(into: buffer)
        return count == 0 ? nil : Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    // MARK: - Segments

    private func copy(from bytes: [UInt8], into target: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(bytes.count - Int(offset), target.count)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            target.baseAddress!.copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
        }
        offset += Int64(count)
        return count
    }

    /// Reads the region's next bytes into `target`; nil when `cachedOnly` and they are not cached.
    private func produce(_ region: FileSlice, into target: UnsafeMutableRawBufferPointer, cachedOnly: Bool) throws -> Int? {
        let remaining = region.length - offset
        guard remaining > 0 else { return 0 }
        if file == nil {
            file = try region.openFile()
            if region.needsContentCheck { scanner = DelimiterScanner(delimiter: delimiter) }
        }
        let want = Int(min(Int64(target.count), remaining))
        let slice = UnsafeMutableRawBufferPointer(rebasing: target[0..<want])
        let count = cachedOnly ? file!.readCached(into: slice, at: region.offset + offset) : file!.read(into: slice, at: region.offset + offset)
        if count < 0, cachedOnly, errno == EAGAIN { return nil }
        if count < 0 {
            throw MultipartError.fileReadFailed(part: region.part, path: region.path, errno: errno)
        }
        if count == 0 {
            let actual = file!.currentSize() ?? region.offset + offset
            throw MultipartError.fileSizeChanged(part: region.part, path: region.path, expected: region.fileSize, actual: actual)
        }
        try check(UnsafeRawBufferPointer(rebasing: slice[0..<count]), part: region.part)
        offset += Int64(count)
        return count
    }

    private func produce(_ segment: StreamSegment, into target: UnsafeMutableRawBufferPointer) async throws -> Int {
        if stream == nil {
            stream = try segment.source.makeIterator(part: segment.part)
            if segment.needsContentCheck { scanner = DelimiterScanner(delimiter: delimiter) }
        }
        while pendingOffset == pending.count {
            guard let chunk = try await stream!.next(part: segment.part) else { return 0 }
            if let declared = segment.length, offset + Int64(chunk.count) > declared {
                throw MultipartError.streamLengthMismatch(part: segment.part, declared: declared, produced: offset + Int64(chunk.count))
            }
            try chunk.withUnsafeBytes { try check($0, part: segment.part) }
            pending = chunk
            pendingOffset = 0
        }
        return copyPending(into: target)
    }

    private func copyPending(into target: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(pending.count - pendingOffset, target.count)
        pending.withUnsafeBytes { source in
            target.baseAddress!.copyMemory(from: source.baseAddress! + pendingOffset, byteCount: count)
        }
        pendingOffset += count
        offset += Int64(count)
        return count
    }

    private func check(_ content: UnsafeRawBufferPointer, part: PartLabel) throws {
        guard scanner != nil else { return }
        if scanner!.scan(content) {
            throw MultipartError.boundaryInContent(part: part, boundary: String(decoding: delimiter.dropFirst(4), as: UTF8.self))
        }
    }

    /// Runs the end-of-segment checks and releases the segment's resources.
    private func finishSegment(_ segment: BodySegment) throws {
        defer {
            file?.close()
            file = nil
            stream = nil
            pending = []
            pendingOffset = 0
            scanner = nil
        }
        switch segment {
        case .bytes:
            break
        case .file(let region):
            if let file {
                try region.verifySize(of: file)
            } else {
                try region.openFile().close()
            }
        case .stream(let stream):
            if let declared = stream.length, offset != declared {
                throw MultipartError.streamLengthMismatch(part: stream.part, declared: declared, produced: offset)
            }
        }
    }
}
