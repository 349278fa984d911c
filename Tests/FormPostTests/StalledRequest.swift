import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 request written by hand to 127.0.0.1, its body sent in parts as the test
/// decides: a client that stalls mid-body, then goes on (or goes away).
final class StalledRequest: Sendable {
    private let descriptor: Int32

    /// Connects to `port` and sends `head` (the request line and header fields, up to the
    /// empty line).
    init(port: Int, head: String) throws {
        guard let descriptor = try RawSocket.connect(port: port) else { throw Subprocess.Failure(description: "connecting to port \(port) failed") }
        self.descriptor = descriptor
        send(Array(head.utf8)[...])
    }

    deinit { close(descriptor) }

    /// Sends `bytes` of the body; a server that answered and closed meanwhile is no failure.
    func send(_ bytes: ArraySlice<UInt8>) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { POSIX.send(descriptor, UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// The status line of the answer (empty when none came within 10 s, or the connection
    /// was reset).
    func statusLine() -> String {
        RawSocket.readStatusLine(descriptor)
    }
}
