#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `SOCK_STREAM` as `socket(2)` takes it: Glibc imports it as an enum, Darwin as an `Int32`.
#if canImport(Glibc)
let streamSocket: Int32 = Int32(SOCK_STREAM.rawValue)
#else
let streamSocket: Int32 = SOCK_STREAM
#endif
