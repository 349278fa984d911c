import AsyncHTTPClient
import Foundation
import FormPost
import Multipart
import NIOSSL
import Testing

/// Uploads through one ``FormPostClient`` go out on the connections its pool keeps: a server
/// that never closes a connection itself sees no more connections than uploads ran at once,
/// over plaintext and TLS, for bodies in memory, streamed from a file and from an async
/// sequence, whatever the answer is then read with.
@Suite("Connection reuse")
struct ConnectionReuseTests {
    /// How a form's body is produced.
    enum Body: String, CaseIterable, Sendable {
        /// Encoded in memory first.
        case inMemory
        /// Streamed from the plan, a file part included.
        case streamedFile
        /// Streamed from the plan, with a stream part of unknown length (chunked).
        case streamedSequence
    }

    @Test("sequential uploads share one connection", arguments: [false, true], Body.allCases)
    func sequentialUploadsShareOneConnection(tls: Bool, body: Body) async throws {
        let accepted = try await countConnections(tls: tls, body: body, uploads: 40, atOnce: 1)
        #expect(accepted == 1, "40 sequential uploads (\(body), \(tls ? "https" : "http")) came on \(accepted) connections")
    }

    @Test("16 uploads at once use at most 16 connections", arguments: [false, true], Body.allCases)
    func concurrentUploadsStayWithinTheirConcurrency(tls: Bool, body: Body) async throws {
        let accepted = try await countConnections(tls: tls, body: body, uploads: 160, atOnce: 16)
        #expect(accepted <= 16, "160 uploads 16 at once (\(body), \(tls ? "https" : "http")) came on \(accepted) connections")
    }

    @Test("2,000 uploads, one after another and 16 at once, all complete")
    func manyUploadsComplete() async throws {
        let accepted = try await countConnections(tls: false, body: .streamedFile, uploads: 1_000, atOnce: 1)
        #expect(accepted == 1)
        let acceptedAtOnce = try await countConnections(tls: false, body: .inMemory, uploads: 1_000, atOnce: 16)
        #expect(acceptedAtOnce <= 16)
    }

    @Test("uploads past the pool's connections wait for one, however long the uploads before them take")
    func uploadsPastThePoolWait() async throws {
        // AsyncHTTPClient keeps a request it has no connection for at most the connect
        // timeout (3 s here); each upload is answered 4 s after it arrived, so the 9th to
        // 24th would fail if they waited in its queue rather than in the transport's. (With
        // 1 s, a connection handed back late on a loaded machine failed a request that had
        // waited in the transport's queue as it should.)
        let directory = try SampleDirectory()
        let server = try await ConnectionCountingServer(in: directory)
        let transport = AsyncHTTPClientTransport(connectTimeout: .seconds(3))
        let client = FormPostClient(transport: transport)
        let url = URL(string: "http://127.0.0.1:\(server.port)/upload?delay=4")!
        let form = try Self.form(.inMemory, in: directory)
        let outcomes = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    do { return .success(try await client.upload(form, to: url).status) } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        try await transport.shutdown()
        let accepted = try server.acceptedConnections()
        try await offPool { server.stop() }
        let failures = outcomes.compactMap { if case .failure(let error) = $0 { "\(error)" } else { nil } }
        #expect(failures.isEmpty, "\(failures.count) of 24 uploads failed: \(failures.first ?? "")")
        #expect(outcomes.allSatisfy { (try? $0.get()) == 200 })
        #expect(accepted <= 8, "24 uploads at once came on \(accepted) connections (the pool's limit is 8)")
    }

    /// Sends `uploads` forms, `atOnce` at a time, through one client on its own transport to a
    /// ``ConnectionCountingServer``; checks every answer and returns how many connections the
    /// server accepted.
    private func countConnections(tls: Bool, body: Body, uploads: Int, atOnce: Int) async throws -> Int {
        let directory = try SampleDirectory()
        let fixtures = tls ? try await offPool { try TLSFixtures() } : nil
        let server = try await ConnectionCountingServer(in: directory, certificate: fixtures?.certificatePath, key: fixtures?.keyPath)
        var configuration = HTTPClient.Configuration()
        if let fixtures {
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            tlsConfiguration.trustRoots = .file(fixtures.caPath)
            configuration.tlsConfiguration = tlsConfiguration
        }
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let client = FormPostClient(transport: transport)
        let url = URL(string: "\(tls ? "https" : "http")://127.0.0.1:\(server.port)/upload")!
        let form = try Self.form(body, in: directory)
        let strategy: EncodingStrategy = body == .inMemory ? .inMemory : .streaming
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<uploads {
                    if index >= atOnce { try await group.next() }
                    group.addTask {
                        let response = try await client.upload(form, to: url, strategy: strategy)
                        try Self.check(response, readWith: index % 3, expectedLength: form.contentLength)
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            try? await transport.shutdown()
            try await offPool { server.stop() }
            throw error
        }
        try await transport.shutdown()
        let accepted = try server.acceptedConnections()
        try await offPool { server.stop() }
        return accepted
    }

    /// A form of ten fields and a 4 KiB file, or a 4 KiB stream part of unknown length.
    private static func form(_ body: Body, in directory: SampleDirectory) throws -> MultipartForm {
        var form = MultipartForm()
        for index in 0..<10 { form.append(name: "field\(index)", value: "value \(index)") }
        let bytes = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
        switch body {
        case .inMemory, .streamedFile:
            try form.append(name: "file", fileAt: try directory.file("small.bin", size: 4096))
        case .streamedSequence:
            form.append(name: "file", length: nil, filename: "small.bin") { Chunks(chunks: [Array(bytes[..<1000]), Array(bytes[1000...])]) }
        }
        return form
    }

    /// Checks that `response` answers a body of `expectedLength` (nil: not known beforehand),
    /// reading it as JSON, as a string, or not at all (`readWith` 0, 1, 2).
    private static func check(_ response: UploadResponse, readWith: Int, expectedLength: Int64?) throws {
        #expect(response.status == 200)
        switch readWith {
        case 0:
            let answer = try response.serialized(by: .decodable(ConnectionCountingServer.Answer.self))
            if let expectedLength { #expect(answer.length == Int(expectedLength)) } else { #expect(answer.length > 4096) }
        case 1:
            #expect(try response.serialized(by: .string).contains("\"connection\":"))
        default:
            break
        }
    }
}
