#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking writes of whole buffers to a file descriptor, for NIO's thread pool.
enum DescriptorWrites {
    /// Writes all of `buffer` to `descriptor`, again after a short write or EINTR.
    ///
    /// - Throws: ``ReceiverFailure`` (507 for a full file system) naming `what` failed.
    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, what: String = "writing an upload failed") throws {
        if let failure = write(buffer, to: descriptor, what: what).failure { throw failure }
    }

    /// Writes as much of `buffer` to `descriptor` as it can, again after a short write or
    /// EINTR: returns how many of its first bytes were written, and the failure that stopped
    /// the rest (nil when none did) — a ``ReceiverFailure`` (507 for a full file system)
    /// naming `what` failed.
    static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32,
                      what: String = "writing an upload failed") -> (written: Int, failure: ReceiverFailure?) {
        var done = 0
        while done < buffer.count {
            #if canImport(Darwin)
            let count = Darwin.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
            #elseif canImport(Glibc)
            let count = Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
            #elseif canImport(Musl)
            let count = Musl.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
            #endif
            if count < 0 {
                if errno == EINTR { continue }
                return (done, ReceiverFailure.storing(what, errno: errno))
            }
            done += count
        }
        return (done, nil)
    }
}
