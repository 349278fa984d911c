import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program found on PATH and returns its standard output; fails on a non-zero exit.
enum Subprocess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ program: String, _ arguments: [String], input: Data? = nil) throws -> String {
        String(decoding: try runForBytes(program, arguments, input: input), as: UTF8.self)
    }

    /// Runs a program found on PATH and returns its standard output as bytes; fails on a non-zero exit.
    static func runForBytes(_ program: String, _ arguments: [String], input: Data? = nil) throws -> Data {
        let finished = try ChildProcess(program, arguments, input: input).finish()
        guard finished.status == 0 else {
            throw Failure(description: "\(program) exited \(finished.status): \(String(decoding: finished.stderr, as: UTF8.self))")
        }
        return finished.stdout
    }

    /// Runs a program found on PATH with its output discarded; returns its exit status.
    static func status(_ program: String, _ arguments: [String]) throws -> Int32 {
        try ChildProcess(program, arguments, stdout: .discard, stderr: .discard).finish().status
    }

    /// The path of a script in Tests/Interop.
    static func interopScript(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Interop/\(name)").path
    }
}

/// Runs blocking `work` on a thread of its own, so that waiting for a child process never
/// occupies the cooperative pool the in-process test servers need — nor Dispatch's global
/// queue, whose few threads would make concurrent tests wait for each other's children.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// A plain TCP client for sending bytes a well-behaved HTTP client never would.
enum RawSocket {
    /// A socket connected to 127.0.0.1:`port`, or nil when nothing accepts there; the caller closes it.
    static func connect(port: Int) throws -> Int32? {
        let descriptor = socket(AF_INET, Platform.streamSocket, 0)
        guard descriptor >= 0 else { throw Subprocess.Failure(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { POSIX.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Waits until something accepts connections on 127.0.0.1:`port`, probing every 25 ms
    /// (one connection a probe: a server with a short listen backlog is not flooded), for
    /// at most `attempts` probes.
    static func waitForListener(port: Int, attempts: Int = 400) async throws {
        _ = try await waitForListener(port: port, attempts: attempts, while: { true })
    }

    /// ``waitForListener(port:attempts:)`` that stops early once `going` is false (the
    /// server's process ended); true once a connection was accepted.
    static func waitForListener(port: Int, attempts: Int, while going: () -> Bool) async throws -> Bool {
        for _ in 0..<attempts {
            if try connects(port: port) { return true }
            if !going() { return false }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    /// ``waitForListener(port:attempts:)`` for code that cannot suspend: it blocks its thread.
    static func waitForListenerBlocking(port: Int, attempts: Int = 400) throws {
        for _ in 0..<attempts {
            if try connects(port: port) { return }
            usleep(25_000)
        }
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func connects(port: Int) throws -> Bool {
        guard let descriptor = try connect(port: port) else { return false }
        close(descriptor)
        return true
    }

    /// Sends all of `bytes` on `descriptor`; false when the connection failed first.
    static func sendAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = POSIX.send(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Connects to 127.0.0.1:`port`, sends `bytes`, and returns the first line of the
    /// answer (empty when none came within `seconds`), then closes.
    static func sendAndReadStatusLine(port: Int, bytes: [UInt8], seconds: Int = 10) throws -> String {
        guard let descriptor = try connect(port: port) else { throw Subprocess.Failure(description: "connect failed") }
        defer { close(descriptor) }
        _ = bytes.withUnsafeBytes { POSIX.send(descriptor, $0) }
        return readStatusLine(descriptor, seconds: seconds)
    }

    /// The first line of what `descriptor` receives (empty when none came within `seconds`,
    /// or the connection was reset).
    static func readStatusLine(_ descriptor: Int32, seconds: Int = 10) -> String {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(0x0A) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        return String(decoding: received.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
    }

    /// Connects to 127.0.0.1:`port`, sends `bytes`, and closes without waiting for an answer.
    static func sendAndClose(port: Int, bytes: [UInt8]) throws {
        guard let descriptor = try connect(port: port) else { throw Subprocess.Failure(description: "connect failed") }
        defer { close(descriptor) }
        _ = bytes.withUnsafeBytes { POSIX.send(descriptor, $0) }
    }
}
