#if Vapor && os(Linux)
import Foundation
@testable import FormPostReceiving
import FormPostVapor
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A Vapor app answering before a request's body is read (a form larger than allowed): the
/// client gets the whole answer, what it still sends is read and dropped for the
/// lingering time, and then the connection is closed — not left open with nobody reading it.
/// (Linux: the client sends with `MSG_NOSIGNAL`.)
@Suite("FormPostVapor after an early answer")
struct VaporEarlyAnswerTests {
    /// How the exchange went, seen from the client.
    struct Seen: Sendable {
        /// The answer's status line.
        var status = ""
        /// Seconds from the request's first byte until the server closed the connection, or
        /// nil when it was still open at the end of the wait. Counted from before the answer,
        /// not from when the client read it: a client late to read (a busy machine) would
        /// otherwise see the lingering time shortened by its own delay.
        var closedAfter: Double?
    }

    /// Sends a form declaring `declared` bytes to the app on `port`, then goes on sending
    /// 16 KiB every 50 ms for at most `seconds` after the answer, until the server closes.
    static func keepSending(port: Int, declared: Int, seconds: Double) throws -> Seen {
        guard let socket = try RawSocket.connect(port: port) else { throw Subprocess.Failure(description: "connect failed") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let head = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(declared)\r\n\r\n"
        let chunk = [UInt8](repeating: 0x61, count: 16 << 10)
        let began = ContinuousClock.now
        _ = Array(head.utf8).withUnsafeBytes { RawSocket.sendAll(socket, $0) }
        _ = chunk.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var seen = Seen(status: RawSocket.readStatusLine(socket, seconds: 30))
        let answered = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now - answered < .seconds(seconds) {
            let sent = chunk.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let sendFailed = sent < 0 && (errno == EPIPE || errno == ECONNRESET)
            var received = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            while received > 0 { received = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT)) }
            let ended = received == 0 || (received < 0 && errno == ECONNRESET)
            if sendFailed || ended {
                let elapsed = ContinuousClock.now - began
                seen.closedAfter = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                return seen
            }
            usleep(50_000)
        }
        return seen
    }

    @Test("a form larger than allowed, its client still sending: 413 at once, then the connection closed once the lingering time is over",
          .timeLimit(.minutes(3)))
    func closesAfterLingering() async throws {
        let sample = try SampleDirectory()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = ReceiverConfiguration(directory: sample.path + "/uploads")
        configuration.maxBodySize = 1 << 20
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let lingering = Double(ReceiverResponse.lingeringTime.components.seconds)
        let seen = try await whileVaporServes(UploadRoutesConfiguration(receiver: receiver)) { port in
            try await offPool { try Self.keepSending(port: port, declared: 1 << 30, seconds: lingering + 30) }
        }
        #expect(seen.status.hasPrefix("HTTP/1.1 413"), "\(seen.status)")
        let closed = try #require(seen.closedAfter, "the connection was still open \(lingering + 30) s after the answer")
        #expect(closed >= lingering - 1, "closed \(closed) s after the request began: before the client had the lingering time")
    }
}
#endif
