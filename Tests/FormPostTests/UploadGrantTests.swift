import Foundation
import FormPostServer
import HTTPTypes
import Hummingbird
import Logging
import Testing

/// An authorization that allows an upload with a grant (``UploadAuthorization/allowWith(_:)``):
/// a tighter byte limit, held for forms, tus and the IETF draft before anything is stored,
/// and metadata of the application's that every event of the upload carries.
@Suite("Upload grants")
struct UploadGrantTests {
    static let metadata = ["user": "42", "purpose": "avatar"]

    /// The events in the outbox at `path`, oldest first.
    static func events(in path: String) -> [UploadEvent] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().compactMap {
            FileManager.default.contents(atPath: path + "/" + $0).flatMap { try? JSONDecoder().decode(UploadEvent.self, from: $0) }
        }
    }

    @Test("UploadServer.authorize granting 4 KiB and metadata: larger forms (declared or chunked), tus and draft creations are answered 413 or 411 with nothing stored; smaller ones are stored, and each post-finish event carries the metadata",
          .timeLimit(.minutes(2)))
    func swiftGrant() async throws {
        let sample = try SampleDirectory()
        let uploads = sample.path + "/uploads", outboxPath = sample.path + "/events"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = ReceiverConfiguration(directory: uploads)
        configuration.events = try UploadEventOutbox(directory: outboxPath)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let tus = try TusReceiver(configuration: configuration, logger: logger)
        let resumable = try ResumableUploadReceiver(receiver: receiver, expiry: .seconds(3600), logger: logger)
        var server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: tus, resumable: resumable)
        server.authorize = { _ in .allowWith(UploadGrant(maxBytes: 4096, metadata: Self.metadata)) }
        let large = try sample.file("large.bin", size: 8192, seed: 3), small = try sample.file("small.bin", size: 1000, seed: 4)
        let stored = { @Sendable in ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter { !$0.hasPrefix(".") } }
        let answers = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            try await offPool {
                let base = "http://127.0.0.1:\(port)"
                let tusHeaders = ["-H", "Tus-Resumable: 1.0.0"]
                var answers: [String: SignedUploadServeTests.Answer] = [:]
                answers["form declared"] = try SignedUploadServeTests.curl(["-F", "f=@" + large, base + "/upload"])
                answers["form chunked"] = try SignedUploadServeTests.curl(["-H", "Transfer-Encoding: chunked", "-F", "f=@" + large, base + "/upload"])
                answers["tus large"] = try SignedUploadServeTests.curl(["-X", "POST"] + tusHeaders + ["-H", "Upload-Length: 8192", base + "/files"])
                answers["draft large"] = try SignedUploadServeTests.curl(["-H", "Upload-Draft-Interop-Version: 8", "-H", "Upload-Complete: ?1",
                                                                          "--data-binary", "@" + large, base + "/upload"])
                answers["draft undeclared"] = try SignedUploadServeTests.curl(["-H", "Upload-Draft-Interop-Version: 8", "-H", "Upload-Complete: ?0",
                                                                               "--data-binary", "@" + small, base + "/upload"])
                answers["nothing stored"] = SignedUploadServeTests.Answer(status: stored().count, body: "")
                answers["form"] = try SignedUploadServeTests.curl(["-F", "f=@" + small, base + "/upload"])
                let created = try SignedUploadServeTests.curl(["-D", "-", "-X", "POST"] + tusHeaders + ["-H", "Upload-Length: 1000", base + "/files"])
                answers["tus created"] = created
                let location = created.body.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }?
                    .dropFirst("location:".count).trimmingCharacters(in: .whitespaces) ?? "/files/none"
                answers["tus appended"] = try SignedUploadServeTests.curl(["-X", "PATCH"] + tusHeaders + ["-H", "Upload-Offset: 0",
                    "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "@" + small, base + location])
                answers["draft"] = try SignedUploadServeTests.curl(["-H", "Upload-Draft-Interop-Version: 8", "-H", "Upload-Complete: ?1",
                                                                    "--data-binary", "@" + small, base + "/upload"])
                return answers
            }
        }
        for name in ["form declared", "form chunked", "tus large", "draft large"] {
            #expect(answers[name]?.status == 413, "\(name): \(answers[name].map { "\($0.status) \($0.body)" } ?? "")")
        }
        #expect(answers["form declared"]?.body.contains("exceeds the limit of 4096 bytes set by its authorization") == true)
        #expect(answers["draft undeclared"]?.status == 411, "\(answers["draft undeclared"]?.body ?? "")")
        #expect(answers["nothing stored"]?.status == 0)
        #expect(answers["form"]?.status == 200 && answers["tus created"]?.status == 201 && answers["tus appended"]?.status == 204,
                "\(answers.mapValues(\.status))")
        #expect([200, 201].contains(answers["draft"]?.status ?? 0), "\(answers["draft"]?.body ?? "")")
        #expect(stored().count == 3)
        let events = Self.events(in: outboxPath)
        #expect(events.map(\.upload.protocol).sorted { $0.rawValue < $1.rawValue } == [.ietf, .multipart, .tus])
        #expect(events.allSatisfy { $0.type == UploadEvent.postFinish && $0.upload.metadata == Self.metadata }, "\(events)")
    }

    @Test("formpost serve --hook-url: a hook answering {\"maxBytes\", \"metadata\"} limits the upload (413 past it) and its metadata reaches the post-finish event the hook receives; a 2xx whose JSON is no grant answers 503",
          .timeLimit(.minutes(3)))
    func hookGrant() async throws {
        let received = UploadAuthorizationTests.Received()
        let router = Router(context: BasicRequestContext.self)
        router.post("hook") { request, _ -> Response in
            let data = Data(buffer: try await request.body.collect(upTo: 1 << 20))
            received.add(data)
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            guard object?["type"] as? String == "pre-create" else { return Response(status: .noContent) }
            let headers = (object?["upload"] as? [String: Any])?["headers"] as? [String: [String]]
            let answer = headers?["authorization"] == ["Bearer nonsense"] ? #"{"maxBytes": "lots"}"# : #"{"maxBytes": 4096, "metadata": {"user": "42"}}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        try await whileRunning({ onStarted in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onStarted($0.localAddress?.port ?? 0) })
        }) { hookPort in
            let sample = try SampleDirectory()
            let port = try freePort()
            let server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", sample.path + "/uploads",
                                                           "--hook-url", "http://127.0.0.1:\(hookPort)/hook", "--hook-timeout", "60",
                                                           "--hook-events", "pre-create,post-finish"], stdout: .discard, stderr: .discard)
            defer { server.stop() }
            try await offPool { try RawSocket.waitForListenerBlocking(port: port, attempts: 800) }
            let large = try sample.file("large.bin", size: 8192, seed: 5), small = try sample.file("small.bin", size: 1000, seed: 6)
            let base = "http://127.0.0.1:\(port)"
            let (tooLarge, stored, nonsense) = try await offPool {
                (try SignedUploadServeTests.curl(["-F", "f=@" + large, base + "/upload"]),
                 try SignedUploadServeTests.curl(["-F", "f=@" + small, base + "/upload"]),
                 try SignedUploadServeTests.curl(["-H", "Authorization: Bearer nonsense", "-F", "f=@" + small, base + "/upload"]))
            }
            #expect(tooLarge.status == 413, "\(tooLarge.body)")
            #expect(stored.status == 200, "\(stored.body)")
            #expect(nonsense.status == 503, "\(nonsense.body)")
            let delivered = try await UploadEventTests.eventually(60) {
                received.all.contains { ((try? JSONSerialization.jsonObject(with: $0)) as? [String: Any])?["type"] as? String == UploadEvent.postFinish }
            }
            #expect(delivered)
            let finished = received.all.compactMap { try? JSONDecoder().decode(UploadEvent.self, from: $0) }
            #expect(finished.count == 1 && finished.first?.upload.metadata == ["user": "42"], "\(finished)")
            #expect(finished.first?.upload.receipt.files.first?.size == 1000)
        }
    }
}
