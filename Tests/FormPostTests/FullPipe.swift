import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pipe whose buffer is already full: a child given its write end as standard output
/// blocks at its first write, until the test reads or closes the read end (which the test
/// keeps open, so that the write neither fails nor raises `SIGPIPE`).
final class FullPipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Subprocess.Failure(description: "pipe failed: errno \(errno)") }
        (readEnd, writeEnd) = (ends[0], ends[1])
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // Filled without blocking, then made blocking again: the child shares the open file's flags.
        let flags = fcntl(writeEnd, F_GETFL)
        _ = fcntl(writeEnd, F_SETFL, flags | O_NONBLOCK)
        let block = [UInt8](repeating: 0x2E, count: 4096)
        while block.withUnsafeBytes({ write(writeEnd, $0.baseAddress, $0.count) }) > 0 {}
        let full = errno == EAGAIN || errno == EWOULDBLOCK
        _ = fcntl(writeEnd, F_SETFL, flags)
        guard full else { throw Subprocess.Failure(description: "filling a pipe failed: errno \(errno)") }
    }

    /// Closes both ends: call it once the child has ended.
    func closeEnds() {
        _ = close(readEnd)
        _ = close(writeEnd)
    }
}
