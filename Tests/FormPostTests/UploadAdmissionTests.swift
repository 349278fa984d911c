import Foundation
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import NIOCore
import Testing

/// How the resumable receivers (tus, the IETF draft) share their room among clients: one
/// client address that creates uploads without end is refused while another still uploads;
/// uploads that receive nothing are removed after the idle expiry; what a creation
/// stopped midway left does not count after a restart; complete uploads' states are bounded.
/// Two clients are two source addresses on the loopback network (127.0.0.1, 127.0.0.2).
@Suite("Resumable uploads shared among clients")
struct UploadAdmissionTests {
    /// A resumable protocol, as a test client speaks it.
    enum ResumableProtocol: String, CustomTestStringConvertible, CaseIterable {
        case tus, draft

        var testDescription: String { rawValue }

        /// The hidden directory of the receiver's uploads in progress.
        var stateName: String { self == .tus ? ".tus" : ".resumable" }

        /// Creates an upload of `length` bytes from `source` with none of them; its path,
        /// or nil when the server refused (the answer is returned too).
        func create(length: Int, port: Int, from source: String) throws -> (path: String?, answer: SourcedHTTP.Answer) {
            let answer = switch self {
            case .tus:
                try SourcedHTTP.send("POST", "/files", port: port, from: source, headers: ["Tus-Resumable": "1.0.0", "Upload-Length": String(length)])
            case .draft:
                try SourcedHTTP.send("POST", "/upload", port: port, from: source, headers: [
                    "Upload-Draft-Interop-Version": "8", "Upload-Complete": length == 0 ? "?1" : "?0", "Upload-Length": String(length),
                    "Content-Type": "application/octet-stream",
                ])
            }
            return ([201, 200].contains(answer.status) ? answer.headers["location"] : nil, answer)
        }

        /// Appends `bytes` at `offset` to the upload at `path` from `source`; `last`: they
        /// are the upload's last.
        func append(_ bytes: [UInt8], at offset: Int, last: Bool, to path: String, port: Int, from source: String) throws -> SourcedHTTP.Answer {
            switch self {
            case .tus:
                try SourcedHTTP.send("PATCH", path, port: port, from: source, headers: [
                    "Tus-Resumable": "1.0.0", "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream",
                ], body: bytes)
            case .draft:
                try SourcedHTTP.send("PATCH", path, port: port, from: source, headers: [
                    "Upload-Draft-Interop-Version": "8", "Upload-Offset": String(offset), "Upload-Complete": last ? "?1" : "?0",
                    "Content-Type": "application/partial-upload",
                ], body: bytes)
            }
        }

        /// `HEAD` on the upload at `path`: its status.
        func head(_ path: String, port: Int) throws -> Int {
            try SourcedHTTP.send("HEAD", path, port: port, from: "127.0.0.1",
                                 headers: self == .tus ? ["Tus-Resumable": "1.0.0"] : ["Upload-Draft-Interop-Version": "8"]).status
        }
    }

    /// The names in `directory`.
    static func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    @Test("one address that creates uploads without end is refused (503) at its own limit, and another address still creates and completes its upload",
          arguments: ResumableProtocol.allCases)
    func oneAddressCannotLockOutAnother(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        let configuration = ReceiverConfiguration(directory: uploads.path, maxUploadsInProgress: 8, maxUploadsInProgressPerClient: 3)
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let (created, refusal) = try await offPool { () -> (Int, SourcedHTTP.Answer?) in
                for count in 0..<100 {
                    let (path, answer) = try resumable.create(length: 10, port: port, from: "127.0.0.1")
                    if path == nil { return (count, answer) }
                }
                return (100, nil)
            }
            let refused = try #require(refusal, "an address creating without end is refused")
            #expect(created == 3 && refused.status == 503 && refused.headers["retry-after"] == "60", "refused after \(created): \(refused.status) \(refused.text)")
            let content = Array("other".utf8)
            let (path, answer) = try await offPool { try resumable.create(length: content.count, port: port, from: "127.0.0.2") }
            let location = try #require(path, "another address creates its upload: \(answer.status) \(answer.text)")
            let appended = try await offPool { try resumable.append(content, at: 0, last: true, to: location, port: port, from: "127.0.0.2") }
            #expect(appended.status == (resumable == .tus ? 204 : 200), "\(appended.status) \(appended.text)")
            let stored = Self.names(in: uploads.path).filter { !$0.hasPrefix(".") }
            #expect(stored.count == 1 && (try? Data(contentsOf: URL(fileURLWithPath: uploads.path + "/" + stored[0]))) == Data(content),
                    "the other address's upload is stored whole")
        }
    }

    @Test("an upload that receives no byte within the idle expiry is removed; one that keeps receiving stays", arguments: ResumableProtocol.allCases)
    func idleUploadRemoved(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        // Long enough for the busy upload's byte to arrive first on a loaded machine: with
        // 3 s, the full suite on 2 cores once took longer between the creation and the byte;
        // with 10 s, so did the full suite beside a loop taking one of the two cores (a
        // creation there took 37 s).
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(45))
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let (idle, busy) = try await offPool { () -> (String?, String?) in
                let busy = try resumable.create(length: 1000, port: port, from: "127.0.0.1").path
                if let busy {
                    let appended = try resumable.append([7], at: 0, last: false, to: busy, port: port, from: "127.0.0.1")
                    #expect((200..<300).contains(appended.status), "the busy upload's byte was taken: \(appended.status)")
                }
                let idle = try resumable.create(length: 10, port: port, from: "127.0.0.1").path
                return (idle, busy)
            }
            let idlePath = try #require(idle), busyPath = try #require(busy)
            var status = 0
            for round in 1...1200 {
                // The busy upload receives a byte each round: it is never idle.
                let appended = try await offPool { try resumable.append([7], at: round, last: false, to: busyPath, port: port, from: "127.0.0.1") }
                #expect((200..<300).contains(appended.status), "the busy upload takes byte \(round): \(appended.status) \(appended.text)")
                status = try await offPool { try resumable.head(idlePath, port: port) }
                if status == 404 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(status == 404, "the idle upload is gone")
            let id = String(idlePath.split(separator: "/").last ?? "")
            #expect(!Self.names(in: uploads.path + "/" + resumable.stateName).contains { $0.hasPrefix(id) }, "its files are removed")
            #expect([200, 204].contains(try await offPool { try resumable.head(busyPath, port: port) }), "an upload that keeps receiving stays")
        }
    }

    @Test("data that a creation stopped midway left without a state is removed at start and does not count among the uploads in progress",
          arguments: ResumableProtocol.allCases)
    func dataWithoutStateDoesNotCount(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        let state = uploads.path + "/" + resumable.stateName
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let orphans = (0..<2).map { _ in UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }
        for orphan in orphans {
            #expect(FileManager.default.createFile(atPath: state + "/" + orphan + ".data", contents: Data()))
            #expect(FileManager.default.createFile(atPath: state + "/" + orphan + ".json.tmp", contents: Data("{".utf8)))
        }
        let configuration = ReceiverConfiguration(directory: uploads.path, maxUploadsInProgress: 2)
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            #expect(Self.names(in: state).isEmpty, "the leftovers are removed: \(Self.names(in: state))")
            for _ in 0..<2 {
                let (path, answer) = try await offPool { try resumable.create(length: 10, port: port, from: "127.0.0.1") }
                #expect(path != nil, "the leftovers do not count: \(answer.status) \(answer.text)")
            }
        }
    }

    @Test("client addresses: an IPv4 address as it is, IPv6 per /56, an IPv4-mapped IPv6 address as its IPv4 address")
    func clientAddresses() throws {
        let key = { (text: String) in ClientAddress.key(try SocketAddress(ipAddress: text, port: 443)) }
        #expect(try key("192.0.2.7") == "192.0.2.7")
        #expect(try key("::ffff:192.0.2.7") == "192.0.2.7")
        #expect(try key("2001:db8:1:2:3:4:5:6") == key("2001:db8:1:2:ffff::1"), "one /64")
        #expect(try key("2001:db8:1:2::1") == key("2001:db8:1:3::1"), "two /64s of one /56")
        #expect(try key("2001:db8:1:2::1") != key("2001:db8:1:102::1"), "two /56s")
        #expect(try key("2001:db8:1:2ff::1") == "2001:db8:1:200::/56")
    }

    @Test("complete zero-length uploads keep at most as many states as uploads may be in progress; their stored files stay",
          arguments: ResumableProtocol.allCases)
    func completeUploadsBounded(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        let configuration = ReceiverConfiguration(directory: uploads.path, maxUploadsInProgress: 3)
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let paths = try await offPool { try (0..<12).map { _ in try resumable.create(length: 0, port: port, from: "127.0.0.1") } }
            #expect(paths.allSatisfy { $0.path != nil }, "\(paths.map(\.answer.status))")
            let states = Self.names(in: uploads.path + "/" + resumable.stateName).filter { $0.hasSuffix(".json") }
            #expect(states.count <= 3, "\(states.count) states kept")
            #expect(Self.names(in: uploads.path).filter { !$0.hasPrefix(".") }.count == 12, "every stored file stays")
            let last = try #require(paths.last?.path)
            #expect([200, 204].contains(try await offPool { try resumable.head(last, port: port) }), "the newest is still known")
        }
    }

    /// Sets the modification time of every file of the upload `id` in `state` to `seconds` ago.
    static func age(_ id: String, in state: String, by seconds: Double) throws {
        let then = Date(timeIntervalSinceNow: -seconds)
        for name in names(in: state) where name.hasPrefix(id) {
            try FileManager.default.setAttributes([.modificationDate: then], ofItemAtPath: state + "/" + name)
        }
    }

    @Test("an upload that received bytes and then nothing for the idle expiry is removed when room is needed, and another address creates its upload",
          arguments: ResumableProtocol.allCases)
    func inactiveUploadWithBytesIsIdle(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        let configuration = ReceiverConfiguration(directory: uploads.path, maxUploadsInProgress: 2, idleUploadExpiry: .seconds(3600))
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(86_400)) { port in
            let held = try await offPool {
                try (0..<2).map { _ in
                    let path = try #require(try resumable.create(length: 10, port: port, from: "127.0.0.1").path)
                    let appended = try resumable.append([7], at: 0, last: false, to: path, port: port, from: "127.0.0.1")
                    guard (200..<300).contains(appended.status) else { throw Subprocess.Failure(description: "the byte was refused: \(appended.status)") }
                    return path
                }
            }
            let refused = try await offPool { try resumable.create(length: 10, port: port, from: "127.0.0.2") }
            #expect(refused.path == nil && refused.answer.status == 503, "full while both receive: \(refused.answer.status)")
            // Both last received a byte two hours ago (their files say so).
            for path in held { try Self.age(String(path.split(separator: "/").last ?? ""), in: uploads.path + "/" + resumable.stateName, by: 7200) }
            // A refused creation looks at an upload's files at most once a second.
            try await Task.sleep(for: .milliseconds(1100))
            let (path, answer) = try await offPool { try resumable.create(length: 10, port: port, from: "127.0.0.2") }
            #expect(path != nil, "the inactive uploads make room: \(answer.status) \(answer.text)")
            #expect(try await offPool { try resumable.head(held[0], port: port) } == 404, "an inactive upload is removed")
        }
    }

    @Test("the lifetime counts from the last activity: an upload begun longer ago than the expiry but still receiving is kept; one inactive that long expires",
          arguments: ResumableProtocol.allCases)
    func lifetimeCountsFromLastActivity(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        let state = uploads.path + "/" + resumable.stateName
        let configuration = ReceiverConfiguration(directory: uploads.path, idleUploadExpiry: .seconds(86_400))
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let path = try #require(try await offPool { try resumable.create(length: 10, port: port, from: "127.0.0.1").path })
            let id = String(path.split(separator: "/").last ?? "")
            let first = try await offPool { try resumable.append([1], at: 0, last: false, to: path, port: port, from: "127.0.0.1") }
            #expect((200..<300).contains(first.status))
            // Begun two hours ago (its state says so), active now.
            let statePath = state + "/" + id + ".json"
            var saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statePath))) as? [String: Any])
            saved["created"] = Date().timeIntervalSince1970 - 7200
            try JSONSerialization.data(withJSONObject: saved).write(to: URL(fileURLWithPath: statePath))
            let second = try await offPool { try resumable.append([2], at: 1, last: false, to: path, port: port, from: "127.0.0.1") }
            #expect((200..<300).contains(second.status), "still receiving, it is kept: \(second.status) \(second.text)")
            // Now nothing happens to it for two hours.
            try Self.age(id, in: state, by: 7200)
            let head = try await offPool { try resumable.head(path, port: port) }
            #expect([404, 410].contains(head), "inactive for longer than the expiry, it is gone: \(head)")
            #expect(!Self.names(in: state).contains { $0.hasPrefix(id) }, "its files are removed")
        }
    }

    @Test("an address whose uploads in progress hold the most bytes one address may is refused (503); another address still creates its upload",
          arguments: ResumableProtocol.allCases)
    func bytesInProgressPerClientBounded(_ resumable: ResumableProtocol) async throws {
        let uploads = try SampleDirectory()
        let configuration = ReceiverConfiguration(directory: uploads.path, maxBytesInProgressPerClient: 1000)
        try await withUploadServer(directory: uploads.path, configuration: configuration, resumableExpiry: .seconds(3600)) { port in
            let path = try #require(try await offPool { try resumable.create(length: 5000, port: port, from: "127.0.0.1").path })
            let appended = try await offPool {
                try resumable.append([UInt8](repeating: 7, count: 1500), at: 0, last: false, to: path, port: port, from: "127.0.0.1")
            }
            #expect((200..<300).contains(appended.status))
            let refused = try await offPool { try resumable.create(length: 10, port: port, from: "127.0.0.1") }
            #expect(refused.path == nil && refused.answer.status == 503, "\(refused.answer.status) \(refused.answer.text)")
            let other = try await offPool { try resumable.create(length: 10, port: port, from: "127.0.0.2") }
            #expect(other.path != nil, "\(other.answer.status) \(other.answer.text)")
        }
    }

    @Test("an address with the most connections one address may have gets its next connection closed unread; another address is still served")
    func connectionsPerAddressBounded() async throws {
        let uploads = try SampleDirectory()
        let limits = ConnectionLimits(maxConnectionsPerAddress: 2)
        try await withUploadServer(directory: uploads.path, limits: limits) { port in
            // Each answer is taken off the pool, the connections kept open meanwhile.
            let (first, third, other) = try await offPool { () -> ([String], String, String) in
                let held = try (0..<2).map { _ in try SourcedConnection(port: port, from: "127.0.0.1") }
                let first = try held.map { try $0.exchange() }
                let third = try SourcedConnection(port: port, from: "127.0.0.1").exchange()
                let other = try SourcedConnection(port: port, from: "127.0.0.2").exchange()
                withExtendedLifetime(held) {}
                return (first, third, other)
            }
            #expect(first.allSatisfy { $0.hasPrefix("HTTP/1.1 415") }, "served while under the limit: \(first)")
            #expect(third.isEmpty, "the third connection of one address is closed unanswered: \(third)")
            #expect(other.hasPrefix("HTTP/1.1 415"), "another address is served: \(other)")
        }
    }
}

/// A keep-alive connection to a server on 127.0.0.1 from a chosen loopback address.
private final class SourcedConnection {
    let descriptor: Int32

    init(port: Int, from source: String) throws {
        descriptor = socket(AF_INET, Platform.streamSocket, 0)
        guard descriptor >= 0 else { throw Subprocess.Failure(description: "socket failed") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = local
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafePointer(to: &local, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }) == 0,
              withUnsafePointer(to: &remote, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, size) } }) == 0 else {
            close(descriptor)
            throw Subprocess.Failure(description: "cannot connect from \(source): errno \(errno)")
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Sends a `POST` with no body (the receiver answers 415, keeping the connection) and
    /// returns what arrives first: the answer's first bytes, or nothing when the server
    /// closed the connection.
    func exchange() throws -> String {
        let request = Array("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { POSIX.send(descriptor, $0) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { throw Subprocess.Failure(description: "no answer and no close within 30 s") }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
    }
}
