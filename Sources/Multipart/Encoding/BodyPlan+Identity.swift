extension BodyPlan {
    /// Feeds `feed` with what identifies the body, in order, without reading any file: the
    /// in-memory bytes as they are, and for each file region a line with its path, offset,
    /// length, the file's size, device, inode and modification time. Two plans that feed
    /// the same bytes produce the same body — as long as no file was rewritten within the
    /// resolution of its modification time. A digest of it keys an upload resumed by
    /// another run of a process.
    ///
    /// - Throws: ``MultipartError/streamNotResumable(part:)`` for a stream part, whose
    ///   content cannot be known before it is produced.
    package func feedIdentity(_ feed: (UnsafeRawBufferPointer) -> Void) throws {
        for segment in segments {
            switch segment {
            case .bytes(let bytes):
                Array("bytes \(bytes.count)\n".utf8).withUnsafeBytes(feed)
                bytes.withUnsafeBytes(feed)
            case .file(let region):
                let identity = region.identity
                let line = "file \(region.path.utf8.count) \(region.path) \(region.offset) \(region.length) \(region.fileSize) "
                    + "\(identity.device) \(identity.inode) \(identity.modificationSeconds).\(identity.modificationNanoseconds)\n"
                Array(line.utf8).withUnsafeBytes(feed)
            case .stream(let stream):
                throw MultipartError.streamNotResumable(part: stream.part)
            }
        }
    }
}
