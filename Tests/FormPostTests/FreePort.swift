import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Ports already handed out in this process, never handed out twice.
private let handedOutPorts = Mutex(Set<Int>())

/// A port on 127.0.0.1 that nothing uses now, for a server the test starts later (nginx,
/// `formpost serve`, a proxy).
///
/// It is chosen *below* the kernel's ephemeral range: a port the kernel picked for a bind to
/// port 0 and that was released is soon picked again — for another test's in-process
/// server or a client connection's local port — and the server meant to have it then fails
/// to bind while the test talks to whoever took it.
func freePort() throws -> Int {
    #if os(Linux)
    let ephemeralStart = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
        .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first ?? "") } ?? 32768
    #else
    let ephemeralStart = 49152   // macOS's default net.inet.ip.portrange.first
    #endif
    let range = 10_000..<max(ephemeralStart, 12_000)
    for _ in 0..<2000 {
        let candidate = Int.random(in: range)
        guard handedOutPorts.withLock({ $0.insert(candidate).inserted }) else { continue }
        if canBind(candidate) { return candidate }
    }
    throw Subprocess.Failure(description: "no free port below \(ephemeralStart)")
}

/// Whether 127.0.0.1:`port` can be bound now.
private func canBind(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Platform.streamSocket, 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
