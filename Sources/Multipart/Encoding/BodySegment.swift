#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One piece of a planned body. A transport may send each as it likes — bytes from
/// memory, a file region with `sendfile`, a stream chunk by chunk — or let a
/// ``BodyChunkReader`` produce them all.
public enum BodySegment: Sendable {
    /// Bytes held in memory: delimiters, header blocks, fields and data parts.
    case bytes([UInt8])
    /// A region of a file.
    case file(FileSlice)
    /// A stream part's content.
    case stream(StreamSegment)

    /// The segment's length, or nil for a stream of unknown length.
    public var length: Int64? {
        switch self {
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let region): return region.length
        case .stream(let stream): return stream.length
        }
    }
}

/// A file's content planned for a part: `length` bytes at `offset` of the file at `path`.
public struct FileSlice: Sendable {
    /// The region `skip..<skip+take` of this one.
    func sliced(skip: Int64, take: Int64) -> FileSlice {
        FileSlice(path: path, offset: offset + skip, length: take, part: part, needsContentCheck: needsContentCheck, identity: identity, fileSize: fileSize)
    }

    /// The file's path.
    public let path: String
    /// Where the region starts in the file.
    public let offset: Int64
    /// The region's length: the file's size when the part was appended.
    public let length: Int64
    /// The part it belongs to.
    public let part: PartLabel
    /// Whether its content must be scanned for the delimiter as it is produced (a
    /// caller-chosen boundary). When false, the region may be sent unread (zero copy).
    public let needsContentCheck: Bool
    /// The file the path named when the part was added, and its modification time.
    let identity: FileIdentity
    /// The file's size when the part was added (the region ends there unless it is a
    /// slice of a body, ``BodyPlan/slice(_:)``).
    let fileSize: Int64

    /// Opens the file and checks that it is still the one recorded, with its size.
    /// The caller owns the returned descriptor and closes it.
    ///
    /// - Throws: ``MultipartError/fileReplaced(part:path:)``,
    ///   ``MultipartError/fileSizeChanged(part:path:expected:actual:)`` and open errors.
    package func openChecked() throws -> Int32 {
        try openFile().descriptor
    }

    /// Checks, after the region was sent from `descriptor`, that the file was not
    /// modified, and did not grow or shrink, meanwhile.
    ///
    /// - Throws: ``MultipartError/fileReplaced(part:path:)``, ``MultipartError/fileSizeChanged(part:path:expected:actual:)``.
    package func verifyUnchanged(descriptor: Int32) throws {
        try verifySize(of: SystemFile(descriptor: descriptor))
    }

    func openFile() throws -> SystemFile {
        let (file, status) = try SystemFile.openRegularFile(path: path)
        do {
            try verify(status)
        } catch {
            file.close()
            throw error
        }
        return file
    }

    /// Checks that `file` is the file recorded (same device, inode and modification time)
    /// and still has the recorded size.
    func verifySize(of file: SystemFile) throws {
        guard let status = file.status() else {
            throw MultipartError.fileReadFailed(part: part, path: path, errno: errno)
        }
        try verify(status)
    }

    /// Checks that `status` is the recorded file's, with the recorded size.
    private func verify(_ status: SystemFile.Status) throws {
        if status.size != fileSize {
            throw MultipartError.fileSizeChanged(part: part, path: path, expected: fileSize, actual: status.size)
        }
        if status.identity != identity {
            throw MultipartError.fileReplaced(part: part, path: path)
        }
    }
}

/// A stream part's content planned for the body.
public struct StreamSegment: Sendable {
    /// The declared length, or nil when unknown.
    public let length: Int64?
    /// The part it belongs to.
    public let part: PartLabel
    /// Whether its content must be scanned for the delimiter as it is produced.
    public let needsContentCheck: Bool
    let source: ByteStreamSource
}
