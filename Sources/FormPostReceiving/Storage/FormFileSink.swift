import NIOCore

/// Where one file of a multipart form goes as it arrives: a file of the receiver's
/// directory (``FileSink``) or an object (``ObjectFileSink``).
protocol FormFileSink {
    /// The name the receipt gives: a file's name in the directory, or an object's key.
    var storedName: String { get }
    /// The bytes written so far.
    var size: Int64 { get }
    /// Takes the next bytes of the file.
    mutating func write(_ bytes: ByteBuffer) async throws
    /// Stores the file whole under ``storedName`` and returns its SHA-256 in hexadecimal;
    /// on failure nothing of it is left.
    mutating func complete() async throws -> String
    /// Drops the file unfinished, leaving nothing of it.
    mutating func discard() async
}

extension FileSink: FormFileSink {}
