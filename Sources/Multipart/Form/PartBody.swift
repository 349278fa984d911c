#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The content of one part: bytes in memory, a file on disk, or a stream.
///
/// Appending records what the body will hold; a file's bytes are read only when the
/// body is produced, and a stream is opened anew each time the body is produced.
public struct PartBody: Sendable {
    enum Storage: Sendable {
        case bytes([UInt8])
        case file(FileReference)
        case stream(ByteStreamSource)
    }

    let storage: Storage

    /// Content held in memory.
    public static func bytes(_ bytes: [UInt8]) -> PartBody { PartBody(storage: .bytes(bytes)) }

    /// Content held in memory, copied once from `data`.
    public static func data(_ data: some DataProtocol) -> PartBody { PartBody(storage: .bytes(Array(data))) }

    /// The content of the file at `path`, checked now (it exists, is a regular file, is
    /// readable) and its size recorded; no content is read.
    ///
    /// - Throws: ``MultipartError/fileNotFound(path:)``, ``MultipartError/notARegularFile(path:)``,
    ///   ``MultipartError/fileNotReadable(path:errno:)``.
    public static func file(path: String) throws -> PartBody {
        PartBody(storage: .file(try FileReference(path: path)))
    }

    /// Content produced by an async sequence of byte chunks that `makeStream` creates
    /// anew each time the body is produced (for retries and redirects).
    ///
    /// With a `length`, the form's content length stays known, and a stream that yields
    /// more or fewer bytes stops the body with ``MultipartError/streamLengthMismatch(part:declared:produced:)``.
    /// Without one, the form's content length is unknown and a transport uses chunked transfer.
    public static func stream<S: AsyncSequence & Sendable>(
        length: Int64?, _ makeStream: @escaping @Sendable () -> S
    ) -> PartBody where S.Element == [UInt8] {
        PartBody(storage: .stream(ByteStreamSource(length: length, makeStream)))
    }

    /// Content from `source` (MultipartFoundation's `InputStream` parts).
    package static func stream(_ source: ByteStreamSource) -> PartBody {
        PartBody(storage: .stream(source))
    }

    /// The content's length in bytes, when known before the body is produced.
    public var length: Int64? {
        switch storage {
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let file): return file.size
        case .stream(let stream): return stream.length
        }
    }
}
