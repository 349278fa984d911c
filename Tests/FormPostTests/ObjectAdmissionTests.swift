import Foundation
import Testing

/// The limits of uploads in progress (`--max-uploads-in-progress`, `-per-client`) with
/// `formpost serve --store`: each receiver counts the uploads it created, and reads their
/// states from the bucket again before it refuses one — so an upload completed or removed
/// on another receiver no longer counts. Two receivers on one moto bucket, tus and the draft
/// spoken by `curl`.
@Suite("Object storage: limits of uploads in progress", .timeLimit(.minutes(3)))
struct ObjectAdmissionTests {
    typealias Helpers = TusCreationExtensionTests

    /// A tus creation of 10 bytes on `base`, from `address`; its status and location.
    static func create(_ base: String, from address: String = "127.0.0.1") async throws -> (status: Int, location: String?, body: String) {
        let answer = try await Helpers.curl(Helpers.tus + ["--interface", address, "-X", "POST", "-H", "Upload-Length: 10", base + "/files"])
        return (answer.status, answer.headers["location"], answer.body)
    }

    @Test("two tus uploads in progress per client, three in all: a client's third creation is answered 503 until one of its uploads is completed on the other receiver or removed; another client's fourth upload in all is refused too; the draft is counted apart, its limits the same")
    func limitsInTheBucket() async throws {
        let moto = try await MotoStore()
        let samples = try SampleDirectory()
        var servers: [ChildProcess] = [], bases: [String] = []
        for name in ["a", "b"] {
            let port = try freePort()
            servers.append(try ChildProcess("env", MotoStore.credentials + [
                formpostBinary, "serve", "--port", String(port), "--dir", samples.path + "/" + name, "--store", "s3://\(moto.bucket)/limits",
                "--s3-endpoint", moto.endpoint, "--max-uploads-in-progress-per-client", "2", "--max-uploads-in-progress", "3",
            ], stdout: .discard, stderr: .discard))
            bases.append("http://127.0.0.1:\(port)")
            try await RawSocket.waitForListener(port: port, attempts: 1200)
        }
        defer { servers.forEach { $0.stop() } }
        let (a, b) = (bases[0], bases[1])

        let first = try await Self.create(a), second = try await Self.create(a)
        #expect(first.status == 201 && second.status == 201, "\(first) \(second)")
        let third = try await Self.create(a)
        #expect(third.status == 503 && third.body.contains("from your address"), "a third upload of one client: \(third)")

        // Completed on the other receiver: the first no longer counts on A.
        let firstURL = b + (try #require(first.location))
        let completed = try await Helpers.curl(Helpers.tus + Helpers.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "0123456789", firstURL])
        #expect(completed.status == 204, "\(completed.status) \(completed.body)")
        try await Task.sleep(for: .milliseconds(1100))
        let afterCompletion = try await Self.create(a)
        #expect(afterCompletion.status == 201, "after one was completed elsewhere: \(afterCompletion)")

        // Removed: the second no longer counts.
        let removed = try await Helpers.curl(Helpers.tus + ["-X", "DELETE", a + (try #require(second.location))])
        #expect(removed.status == 204)
        let afterRemoval = try await Self.create(a)
        #expect(afterRemoval.status == 201, "after one was removed: \(afterRemoval)")
        #expect(try await Self.create(a).status == 503, "a client past its two again")

        // Another client: one more makes three in all on A, a fourth is refused.
        #expect(try await Self.create(a, from: "127.0.0.2").status == 201)
        let fourth = try await Self.create(a, from: "127.0.0.3")
        #expect(fourth.status == 503 && fourth.body.contains("3 uploads are in progress"), "a fourth upload in all: \(fourth)")

        // The draft's uploads are counted apart, as on the disk: two for this client, not three.
        var drafts: [Int] = []
        for _ in 0..<3 {
            drafts.append(try await offPool {
                try SignedUploadServeTests.curl(["-s", "-o", "/dev/null", "-X", "POST", "-H", "Upload-Draft-Interop-Version: 6", "-H", "Upload-Complete: ?0",
                                                 "-H", "Upload-Length: 10", "--data-binary", "", a + "/upload"])
            }.status)
        }
        #expect(drafts == [201, 201, 503], "three draft creations of one client: \(drafts)")
        withExtendedLifetime(moto) {}
    }
}
