import Foundation
import Multipart

/// Reads an `InputStream` in 256 KiB chunks. Never calls `streamError`, which
/// swift-corelibs-foundation does not implement.
final class InputStreamChunkIterator: ByteChunkIterator {
    private let stream: InputStream
    private var opened = false

    init(_ stream: InputStream) { self.stream = stream }

    func next(part: PartLabel) async throws -> [UInt8]? {
        if !opened {
            opened = true
            if stream.streamStatus == .notOpen { stream.open() }
        }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBufferPointer { buffer in
            stream.read(buffer.baseAddress!, maxLength: buffer.count)
        }
        if count < 0 {
            stream.close()
            throw MultipartError.streamFailed(part: part, reason: "the input stream reported a read error")
        }
        if count == 0 {
            stream.close()
            return nil
        }
        chunk.removeSubrange(count...)
        return chunk
    }
}
