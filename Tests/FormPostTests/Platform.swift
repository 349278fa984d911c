#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the tests need to know about the platform they run on (Linux or macOS).
enum Platform {
    /// Whether the tests run on Linux. Tests that run what only Linux has — strace,
    /// util-linux's `script`, Debian's Chromium — are enabled there only:
    /// `.enabled(if: Platform.isLinux, "why")`; those whose code needs Linux (`/proc`, a tmpfs
    /// mount, `posix_fadvise`, and nginx's suite with them) are compiled there only, in
    /// `#if os(Linux)`. On Linux every one runs, and fails when a peer is missing, as before.
    #if os(Linux)
    static let isLinux = true
    #else
    static let isLinux = false
    #endif

    /// `SOCK_STREAM` as `socket(2)` takes it: Glibc imports it as an enum, Darwin as an `Int32`.
    #if canImport(Glibc)
    static let streamSocket: Int32 = Int32(SOCK_STREAM.rawValue)
    #else
    static let streamSocket: Int32 = SOCK_STREAM
    #endif
}

/// C calls made from inside a type with a member of the same name, which hides the C
/// function from an unqualified call; the module that declares it differs per platform.
enum POSIX {
    /// `read(2)`.
    static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.read(descriptor, buffer, count)
        #elseif canImport(Darwin)
        return Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// `write(2)`.
    static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.write(descriptor, buffer, count)
        #elseif canImport(Darwin)
        return Darwin.write(descriptor, buffer, count)
        #endif
    }

    /// `connect(2)`.
    static func connect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        return Glibc.connect(descriptor, address, length)
        #elseif canImport(Darwin)
        return Darwin.connect(descriptor, address, length)
        #endif
    }

    /// `send(2)` of `bytes` on a socket, never raising SIGPIPE when the peer has gone (the send
    /// fails with EPIPE instead): Linux has the `MSG_NOSIGNAL` flag, Darwin the socket option
    /// `SO_NOSIGPIPE`.
    static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        return Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        #elseif canImport(Darwin)
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        return Darwin.send(descriptor, bytes.baseAddress, bytes.count, 0)
        #endif
    }
}
