import Foundation
import FormPost
import FormPostFoundation
import FormPostURLSession
import Multipart
import NIOPosix
import Testing

/// The keep-alive race: a request sent on a pooled connection just as the server closes
/// it fails before any byte of an answer. FormPostClient sends it once more at once, on
/// another connection, as curl does — unless its body may be a one-shot stream.
extension ClientTests {
    /// Runs `body` with a client whose transport has one event loop (so that its pool holds
    /// one connection) and the URL of a ``KeepAliveRaceServer``; returns what `body`
    /// returned and the requests the server saw.
    func withKeepAliveRace<T: Sendable>(_ mode: KeepAliveRaceServer.Mode, _ directory: SampleDirectory,
                                        _ body: @Sendable (FormPostClient, URL) async throws -> T) async throws -> (T, [KeepAliveRaceServer.Request]) {
        let server = try await KeepAliveRaceServer(mode, in: directory)
        defer { server.stop() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let transport = AsyncHTTPClientTransport(configuration: .init(), eventLoopGroup: group)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(FormPostClient(transport: transport), URL(string: "http://127.0.0.1:\(server.port)/upload")!))
        } catch {
            result = .failure(error)
        }
        try await transport.shutdown()
        try await group.shutdownGracefully()
        return (try result.get(), try server.requests())
    }

    /// A form with a field and a 200 kB file, and its length.
    static func raceForm(_ directory: SampleDirectory) throws -> (MultipartForm, Int) {
        var form = MultipartForm()
        form.append(name: "title", value: "again")
        try form.append(name: "file", fileAt: try directory.file("part.bin", size: 200_000, seed: 3))
        return (form, Int(try #require(try form.plan().contentLength)))
    }

    /// Uploads `form` `count` times one after the other; returns the failures.
    static func uploads(_ form: MultipartForm, length: Int, count: Int, rate: Int64?, client: FormPostClient, url: URL) async -> [String] {
        var failures: [String] = []
        for upload in 0..<count {
            do {
                let response = try await client.upload(form, to: url, strategy: .streaming, options: UploadOptions(maxBytesPerSecond: rate))
                #expect(response.status == 200 && response.body == Array(String(length).utf8))
            } catch {
                failures.append("upload \(upload): \(error)")
            }
        }
        return failures
    }

    /// Checks that each dropped request was sent again at once, whole, on a fresh connection.
    static func expectResentOnFreshConnections(_ requests: [KeepAliveRaceServer.Request], length: Int) throws {
        for index in requests.indices where !requests[index].answered {
            let resent = try #require(requests.indices.contains(index + 1) ? requests[index + 1] : nil, "nothing was sent after \(requests[index])")
            #expect(resent.connection != requests[index].connection && resent.number == 1 && resent.answered, "\(requests)")
        }
        #expect(requests.allSatisfy { $0.bytes == length }, "every request carried the whole body: \(requests)")
    }

    // With a rate cap the transport lets AsyncHTTPClient choose the connection: each upload
    // after the first reuses the pooled one, and meets the server's close.
    @Test("five uploads to a server that closes each connection at its second request, without an answer or Connection: close: all succeed, each dropped request sent again at once on a fresh connection with its whole body")
    func keepAliveRace() async throws {
        let directory = try SampleDirectory()
        let (form, length) = try Self.raceForm(directory)
        let (failures, requests) = try await withKeepAliveRace(.secondOnEachConnection, directory) { [form] client, url in
            await Self.uploads(form, length: length, count: 5, rate: 50_000_000, client: client, url: url)
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(requests.filter { !$0.answered }.count == 4, "each upload after the first met a closing connection: \(requests)")
        try Self.expectResentOnFreshConnections(requests, length: length)
    }

    // Without a rate cap the body goes through AsyncHTTPClient's delegate API, on a connection
    // bound to an event loop, which AsyncHTTPClient closes after the request unless another
    // is waiting. The server drops the second request: one came back answered just before.
    @Test("an upload whose connection closes before any answer on the delegate path (no rate cap), right after an answered one, is sent again at once, whole, on a fresh connection")
    func closedBeforeAnswerWithoutRateCap() async throws {
        let directory = try SampleDirectory()
        let (form, length) = try Self.raceForm(directory)
        let (failures, requests) = try await withKeepAliveRace(.secondOfAll, directory) { [form] client, url in
            await Self.uploads(form, length: length, count: 3, rate: nil, client: client, url: url)
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(requests.count == 4 && !requests[1].answered, "\(requests)")
        try Self.expectResentOnFreshConnections(requests, length: length)
    }

    // The first request to an origin cannot go out on a pooled connection: a close before
    // its answer is a server that failed while it handled it, perhaps after doing the work.
    @Test("the first upload to a server, whose new connection closes before any answer, is not sent again: it fails with the connection's error")
    func closedBeforeAnswerOnNewConnection() async throws {
        let directory = try SampleDirectory()
        let (form, length) = try Self.raceForm(directory)
        let (failures, requests) = try await withKeepAliveRace(.firstOfAll, directory) { [form] client, url in
            await Self.uploads(form, length: length, count: 2, rate: nil, client: client, url: url)
        }
        #expect(failures.count == 1 && failures[0].hasPrefix("upload 0:"), "\(failures)")
        #expect(requests.count == 2 && !requests[0].answered && requests[1].answered, "sent once each: \(requests)")
    }

    @Test("a one-shot InputStream body whose connection closes before any answer is not sent again: the upload fails with the connection's error")
    func closedBeforeAnswerOneShotBody() async throws {
        let directory = try SampleDirectory()
        let (error, requests) = try await withKeepAliveRace(.secondOfAll, directory) { client, url in
            let bytes = Data(repeating: 7, count: 1000)
            // Answered: the stream's request is the second, on what may be a pooled connection.
            _ = try await client.send(.bytes(Array(bytes)), to: url)
            return await #expect(throws: UploadError.self) {
                try await client.send(.inputStream(InputStream(data: bytes), length: Int64(bytes.count)), to: url)
            }
        }
        guard case .transport = try #require(error) else {
            Issue.record("expected UploadError.transport, got \(String(describing: error))")
            return
        }
        #expect(requests.count == 2 && !requests[1].answered, "the stream was sent once: \(requests)")
    }
}
