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
                throw ReceiverFailure.storing(what, errno: errno)
            }
            done += count
        }
    }
}
