import Foundation
@testable import FormPostReceiving
import FormPostS3
import FormPostServer
import Logging
import Multipart
import NIOCore
import Testing

/// Events in the bucket (`ObjectEventQueue`): `formpost serve --store s3://… --hook-events
/// post-finish` records each event in the bucket, so that a receiver killed with its disk
/// leaves its events to the others, and the receivers on one bucket deliver each event once.
/// Two receivers on moto, a hook in this process.
@Suite("Object storage: events in the bucket", .timeLimit(.minutes(3)))
struct ObjectEventQueueTests {
    /// A bucket that receivers are pointed at, and how to read it back.
    struct TestBucket: Sendable {
        let name: String
        let endpoint: String
        let credentials: [String]
        let contents: @Sendable () async throws -> MotoStore.Contents

        static func moto(_ moto: MotoStore) -> TestBucket {
            TestBucket(name: moto.bucket, endpoint: moto.endpoint, credentials: MotoStore.credentials, contents: { try await moto.contents() })
        }

        static func ceph(_ gateway: CephGateway) -> TestBucket {
            TestBucket(name: gateway.bucket, endpoint: gateway.endpoint, credentials: CephGateway.credentials, contents: { try await gateway.contents() })
        }

        /// The events' objects left in the bucket (`.events/ID.json`), once delivered none.
        func events() async throws -> [String] {
            try await contents().objects.map(\.key).filter { $0.contains("/.events/") && $0.hasSuffix(".json") }
        }
    }

    /// Two `formpost serve` on one `bucket` (the endpoint alone: an IP address is addressed
    /// path-style), each with a directory of its own, posting post-finish events to the
    /// hook at `hookPort`.
    final class Receivers: Sendable {
        let directory: SampleDirectory
        let ports: [Int]
        let processes: [ChildProcess]

        init(_ bucket: TestBucket, hookPort: Int) async throws {
            directory = try SampleDirectory()
            var ports: [Int] = [], processes: [ChildProcess] = []
            for name in ["a", "b"] {
                let port = try freePort()
                let serve = bucket.credentials + [
                    formpostBinary, "serve", "--port", String(port), "--dir", directory.path + "/" + name, "--store", "s3://\(bucket.name)/events",
                    "--s3-endpoint", bucket.endpoint, "--s3-lease", "6", "--s3-sweep", "1",
                    "--hook-url", "http://127.0.0.1:\(hookPort)/events", "--hook-events", "post-finish", "--hook-timeout", "5",
                ]
                processes.append(try ChildProcess("env", serve, stdout: .discard, stderr: .discard))
                ports.append(port)
            }
            (self.ports, self.processes) = (ports, processes)
            for port in ports { try await RawSocket.waitForListener(port: port, attempts: 1200) }
        }

        deinit { processes.forEach { $0.stop() } }

        /// Sends a form with a 100 kB file to receiver `index`; its receipt.
        func upload(to index: Int, seed: Int) async throws -> Receipt {
            let file = try directory.file("photo-\(seed).bin", size: 100_000, seed: UInt8(seed % 256))
            let answer = try await offPool {
                try SignedUploadServeTests.curl(["-F", "title=Hi", "-F", "photo=@" + file, "http://127.0.0.1:\(self.ports[index])/upload"])
            }
            #expect(answer.status == 200, "\(answer.body)")
            return try JSONDecoder().decode(Receipt.self, from: Data(answer.body.utf8))
        }
    }

    /// A receiver killed (SIGKILL) with its disk before the hook took its event: the other
    /// delivers it, once, with the receipt answered; the bucket then holds none.
    static func deliveredByTheOther(_ bucket: TestBucket) async throws {
        let hook = UploadEventTests.EventHook()
        try await UploadEventTests.withHook(hook) { hookPort in
            let receivers = try await Receivers(bucket, hookPort: hookPort)
            let receipt = try await receivers.upload(to: 0, seed: 1)
            #expect(try await bucket.events().count == 1, "the event was not recorded in the bucket before the answer")
            #expect(try await UploadEventTests.eventually(30) { !hook.events.isEmpty }, "the hook was never offered the event")
            let offered = try #require(hook.events.first?.event)
            kill(receivers.processes[0].pid, SIGKILL)
            _ = try await offPool { try receivers.processes[0].finish(timeout: 30) }
            try FileManager.default.removeItem(atPath: receivers.directory.path + "/a")

            hook.accepting = true
            #expect(try await UploadEventTests.eventually(60) { hook.events.contains { $0.accepted } }, "the other receiver did not deliver the event")
            try await Task.sleep(for: .seconds(4))
            let delivered = hook.events.filter(\.accepted).map(\.event)
            #expect(delivered.count == 1, "delivered \(delivered.count) times: \(delivered.map(\.id))")
            #expect(delivered.first?.id == offered.id && delivered.first?.upload.receipt == receipt)
            #expect(try await bucket.events().isEmpty, "the delivered event is still in the bucket")
        }
    }

    /// Ten forms and a tus upload across two receivers, both delivering, the hook taking
    /// 1.5 s per event (the other receiver looks every second): each event taken once.
    static func eachEventOnce(_ bucket: TestBucket) async throws {
        let hook = UploadEventTests.EventHook()
        hook.accepting = true
        hook.answerDelay = .milliseconds(1500)
        try await UploadEventTests.withHook(hook) { hookPort in
            let receivers = try await Receivers(bucket, hookPort: hookPort)
            var receipts: [Receipt] = []
            for seed in 0..<10 { receipts.append(try await receivers.upload(to: seed % 2, seed: seed)) }
            // A tus upload whole in its creation: its completion records its event too.
            let created = try await TusCreationExtensionTests.curl(TusCreationExtensionTests.tus + [
                "-X", "POST", "-H", "Upload-Length: 5", "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "hello",
                "http://127.0.0.1:\(receivers.ports[1])/files",
            ])
            #expect(created.status == 201 && created.headers["upload-offset"] == "5", "\(created)")
            #expect(try await UploadEventTests.eventually(90) { Set(hook.events.map(\.event.id)).count == 11 }, "not every event was delivered: \(hook.events.count)")
            // Both receivers look at the bucket every second: time for a second delivery.
            try await Task.sleep(for: .seconds(4))
            let ids = hook.events.map(\.event.id)
            #expect(ids.count == 11, "\(ids.count) deliveries of \(Set(ids).count) events: \(ids.sorted())")
            #expect(hook.events.filter { $0.event.upload.protocol == .tus }.count == 1, "the tus upload's event: \(hook.events.map(\.event.upload.protocol))")
            let taken = hook.events.compactMap(\.event.upload.receipt)
            #expect(receipts.allSatisfy(taken.contains), "the events' receipts are not the receipts answered")
            #expect(try await bucket.events().isEmpty, "delivered events are still in the bucket")
        }
    }

    @Test("on moto, a receiver killed (SIGKILL) with its disk before the hook took its event: the other receiver on the bucket delivers the event, once, with the receipt answered; the bucket then holds none")
    func deliveredByTheOtherOnMoto() async throws {
        let moto = try await MotoStore()
        try await Self.deliveredByTheOther(.moto(moto))
    }

    @Test("on moto, ten forms and a tus upload across two receivers on one bucket, both delivering, the hook taking 1.5 s per event (the other receiver looks every second): the hook takes each event exactly once")
    func eachEventOnceOnMoto() async throws {
        let moto = try await MotoStore()
        try await Self.eachEventOnce(.moto(moto))
    }

    @Test("a queue of at most 2 events refuses a third (503) until another receiver delivered one; an event the hook never takes goes to dead/, and an object that is no event to unreadable/")
    func boundedAndSetAside() async throws {
        let moto = try await MotoStore()
        var storage = moto.storage(prefix: "queue")
        try await storage.checkConditionalWrites()
        let queue = ObjectEventQueue(store: storage, maxCount: 2, pollInterval: .milliseconds(200))
        let upload = UploadEvent.Upload(protocol: .multipart, method: "POST", path: "/upload", client: nil, receipt: Receipt())
        let first = try await queue.record(UploadEvent.postFinish, upload: upload)
        let second = try await queue.record(UploadEvent.postFinish, upload: upload)
        await #expect(throws: ReceiverFailure.self, "a third event was recorded past --events-max-count") {
            try await queue.record(UploadEvent.postFinish, upload: upload)
        }
        // Another receiver on the bucket delivers the first: counted again, there is room.
        await ObjectEventQueue(store: storage).removeDelivered(first.id)
        let third = try await queue.record(UploadEvent.postFinish, upload: upload)
        _ = try await storage.put(queue.keyPrefix + "0-unreadable.json", body: ByteBuffer(string: "{not json"), what: "a test object")

        var delivery = UploadEventDelivery(outbox: queue) { _ in throw ObjectStorageError.refused(what: "a test hook", status: 503, code: nil, message: nil) }
        delivery.maxAttempts = 1
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        delivery.logger = logger
        let running = delivery
        let task = Task { await running.run() }
        let prefix = storage.prefix + ".events/"
        var keys: [String] = []
        for _ in 0..<100 {
            keys = try await moto.contents().objects.map(\.key).filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.sorted()
            if keys.filter({ !$0.contains("/") }).isEmpty, keys.count == 3 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        task.cancel()
        await task.value
        #expect(keys == ["dead/\(second.id).json", "dead/\(third.id).json", "unreadable/0-unreadable.json"].sorted(), "\(keys)")
    }
}
