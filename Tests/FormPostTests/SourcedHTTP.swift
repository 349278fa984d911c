import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP/1.1 requests to a server on 127.0.0.1 sent from a chosen local address of the
/// loopback network (`127.0.0.2`: Linux routes all of 127/8 to the loopback interface), so
/// that one test can be several clients as the server tells them apart. One connection per
/// request (`Connection: close`); interim (1xx) answers are skipped.
enum SourcedHTTP {
    /// A final answer: its status, header fields (names lowercased) and body, and the heads
    /// of the interim answers before it, as they came.
    struct Answer: Sendable {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]
        var interim: [String] = []

        /// The body as text.
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `method path` with `headers` and `body` from `source` to 127.0.0.1:`port` and
    /// reads the answer (within 10 s). It blocks: call it with ``offPool(_:)``.
    static func send(_ method: String, _ path: String, port: Int, from source: String, headers: [String: String] = [:],
                     body: [UInt8] = []) throws -> Answer {
        let descriptor = socket(AF_INET, Platform.streamSocket, 0)
        guard descriptor >= 0 else { throw Subprocess.Failure(description: "socket failed") }
        defer { close(descriptor) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = local
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafePointer(to: &local, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }) == 0 else {
            throw Subprocess.Failure(description: "cannot bind \(source): errno \(errno)")
        }
        guard withUnsafePointer(to: &remote, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { POSIX.connect(descriptor, $0, size) } }) == 0 else {
            throw Subprocess.Failure(description: "cannot connect from \(source): errno \(errno)")
        }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        _ = request.withUnsafeBytes { POSIX.send(descriptor, $0) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        return try parse(received[...])
    }

    /// The final answer in `bytes`, after any interim ones.
    private static func parse(_ bytes: ArraySlice<UInt8>) throws -> Answer {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var rest = bytes
        var interim: [String] = []
        while true {
            guard let end = rest.indices.first(where: { rest[$0...].starts(with: separator) }) else {
                throw Subprocess.Failure(description: "no complete answer: \(String(decoding: bytes, as: UTF8.self))")
            }
            let lines = String(decoding: rest[rest.startIndex..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
            rest = rest[(end + separator.count)...]
            if (100..<200).contains(status) { interim.append(lines.joined(separator: "\r\n")) }
            guard (100..<200).contains(status) else {
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                return Answer(status: status, headers: headers, body: Array(rest), interim: interim)
            }
        }
    }
}
