#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Hummingbird
import NIOCore
import NIOPosix

/// Appends a request's body to a resumable upload's data, as it arrives, up to the
/// upload's length: what reached the disk of a request that was cut stays (the caller
/// decides whether it counts). Both receivers' appends go through it.
struct BodyAppender {
    /// How an append ended.
    struct Outcome {
        /// The upload's offset after it: what was written.
        var offset: Int64
        /// Whether the request was cut (its client went away) before its end.
        var cut: Bool
        /// Whether the body went past the limit (nothing past it was written).
        var overflowed: Bool
    }

    let threadPool: NIOThreadPool

    /// Writes `body` to `descriptor` (the data of an upload at `offset`), not past `limit`
    /// bytes in all; every byte written also goes to `digest` (the upload's running
    /// SHA-256, taken beside the writes) and `checksum` (this request's). The descriptor is
    /// closed, whatever happens; after an error, `digest` is nil (it no longer covers the data).
    func append(_ body: RequestBody, to descriptor: Int32, at offset: Int64, limit: Int64,
                digest: inout SHA256?, checksum: inout ChecksumHasher?) async throws -> Outcome {
        defer { close(descriptor) }
        var outcome = Outcome(offset: offset, cut: false, overflowed: false)
        var writer = PipelinedFileWriter(descriptor: descriptor, threadPool: threadPool, digest: digest)
        digest = nil
        do {
            for try await var buffer in body {
                let room = Int(clamping: max(0, limit - outcome.offset))
                if buffer.readableBytes > room {
                    outcome.overflowed = true
                    buffer = buffer.getSlice(at: buffer.readerIndex, length: room) ?? ByteBuffer()
                }
                outcome.offset += Int64(buffer.readableBytes)
                if checksum != nil { buffer.withUnsafeReadableBytes { checksum?.update($0) } }
                try await writer.write(buffer)
                if outcome.overflowed { break }
            }
        } catch let error as ReceiverFailure {
            _ = try? await writer.finish()
            throw error
        } catch {
            // The client went away (or the request was ended for a newer one).
            outcome.cut = true
        }
        digest = try await writer.finish()
        return outcome
    }
}
