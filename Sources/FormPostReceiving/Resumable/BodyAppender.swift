#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
import HTTPTypes
import NIOCore
import NIOPosix

/// Appends a request's body to a resumable upload's data, as it arrives, up to the
/// upload's length: what reached the disk of a request that was cut stays (the caller
/// decides whether it counts). After a write fails, nothing more of the request is written
/// or read. Both receivers' appends go through it.
struct BodyAppender {
    /// How an append ended.
    struct Outcome {
        /// The upload's offset after it: where its data ends in order, all of it written.
        var offset: Int64
        /// Whether the request was cut (its client went away) before its end.
        var cut: Bool
        /// Whether the body went past the limit (nothing past it was written).
        var overflowed: Bool
        /// The failure of a write (a full disk), which ended the append: ``offset`` is then
        /// where the bytes written in order end; the caller cuts the data back to it.
        var failure: (any Error)?
    }

    let threadPool: NIOThreadPool

    /// Writes `body` to `descriptor` (the data of an upload at `offset`), not past `limit`
    /// bytes in all; every byte written also goes to `digest` (the upload's running
    /// SHA-256, taken beside the writes), which then covers the data up to the outcome's
    /// offset, also after a failed write; every byte received goes to `checksum` (this
    /// request's). The descriptor is closed, whatever happens.
    func append(_ body: ReceiverRequestBody, to descriptor: Int32, at offset: Int64, limit: Int64,
                digest: inout SHA256Hasher?, checksum: inout ChecksumHasher?) async -> Outcome {
        defer { close(descriptor) }
        var outcome = Outcome(offset: offset, cut: false, overflowed: false)
        var writer = PipelinedFileWriter(descriptor: descriptor, threadPool: threadPool, digest: digest)
        var received = offset
        do {
            for try await var buffer in body {
                outcome.overflowed = Self.clip(&buffer, at: received, limit: limit)
                received += Int64(buffer.readableBytes)
                if checksum != nil { buffer.withUnsafeReadableBytes { checksum?.update($0) } }
                guard await writer.write(buffer), !outcome.overflowed else { break }
            }
        } catch {
            // The client went away (or the request was ended for a newer one).
            outcome.cut = true
        }
        let written = await writer.finish()
        outcome.offset = offset + written.bytes
        outcome.failure = written.failure
        digest = written.digest
        return outcome
    }

    /// Cuts `buffer`, bytes from position `position`, at `limit`; whether it went past.
    static func clip(_ buffer: inout ByteBuffer, at position: Int64, limit: Int64) -> Bool {
        let room = Int(clamping: max(0, limit - position))
        guard buffer.readableBytes > room else { return false }
        buffer = buffer.getSlice(at: buffer.readerIndex, length: room) ?? ByteBuffer()
        return true
    }
}
