import Foundation
import FormPost
@testable import FormPostReceiving
import Multipart
import NIOCore
import Testing

/// The memory that parts gathering for object storage may hold at once (`PartMemoryBudget`,
/// `formpost serve --s3-memory`): requests past it wait, in order, and a receiver's peak
/// stays near its limit however many upload at once.
@Suite("Object storage: parts' memory", .timeLimit(.minutes(5)))
struct PartMemoryTests {
    /// Waits until `count` wait on `budget`.
    static func waitUntil(_ budget: PartMemoryBudget, hasWaiting count: Int) async throws {
        for _ in 0..<500 where budget.waitingCount != count { try await Task.sleep(for: .milliseconds(10)) }
        try #require(budget.waitingCount == count, "\(budget.waitingCount) waiting, not \(count)")
    }

    /// A budget of 10 bytes holding `held`, and two takes of `first` and `second` bytes
    /// waiting on it, in that order.
    static func queued(holding held: Int, first: Int, second: Int) async throws -> (PartMemoryBudget, Task<Void, any Error>, Task<Void, any Error>) {
        let budget = PartMemoryBudget(limit: 10)
        try await budget.take(held)
        let firstTake = Task { try await budget.take(first) }
        try await waitUntil(budget, hasWaiting: 1)
        let secondTake = Task { try await budget.take(second) }
        try await waitUntil(budget, hasWaiting: 2)
        return (budget, firstTake, secondTake)
    }

    @Test("takes past the limit wait, first come first served (a small one behind a large one too), and go on as bytes are given back")
    func waitsInOrder() async throws {
        let (budget, large, small) = try await Self.queued(holding: 6, first: 6, second: 2)
        #expect(budget.held == 6 && !budget.takeIfFree(1), "nothing is taken past those waiting")
        budget.give(6)
        try await large.value
        try await small.value
        #expect(budget.held == 8 && budget.waitingCount == 0 && budget.peak == 8)
    }

    @Test("a take cancelled while it waits takes nothing and lets the next in; one alone gets more than the limit")
    func cancelledAndAlone() async throws {
        let (budget, cancelled, next) = try await Self.queued(holding: 8, first: 5, second: 2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        try await next.value
        #expect(budget.held == 10)
        budget.give(10)
        try await budget.take(64)
        #expect(budget.held == 64, "a request alone waited for itself")
    }

    @Test("parts' buffers of a pipeline come from the budget and go back when it ends: the first 64 KiB, then a part; with no room for a second part, the next gathers in the buffer of the part sent",
          .timeLimit(.minutes(2)))
    func pipelineHolds() async throws {
        let moto = try await MotoStore()
        let storage = moto.storage(prefix: "memory")
        let budget = PartMemoryBudget(limit: 8 << 20)
        var pipeline = ObjectPartPipeline(store: storage, key: "memory/object", partSize: 5 << 20, hold: PartMemoryHold(budget)) {
            try await storage.beginMultipartUpload(of: "memory/object", attributes: ObjectAttributes())
        }
        try await pipeline.write(ByteBuffer(repeating: 1, count: 1000))
        #expect(budget.held == 64 << 10)
        try await pipeline.write(ByteBuffer(repeating: 2, count: 12 << 20))
        #expect(budget.held == 5 << 20 && budget.peak == 5 << 20, "held \(budget.held), peak \(budget.peak)")
        try await pipeline.sendGathered()
        try await pipeline.settle()
        try await storage.completeMultipartUpload(of: "memory/object", uploadID: try #require(pipeline.uploadID), parts: pipeline.parts)
        #expect(pipeline.parts.map(\.size) == [5 << 20, 5 << 20, (2 << 20) + 1000])
        pipeline = ObjectPartPipeline(store: storage, key: "unused", partSize: 5 << 20) { "unused" }
        #expect(budget.held == 0, "the ended pipeline still holds \(budget.held) bytes")
        let stored = try await moto.contents().objects.first { $0.key == "memory/object" }
        #expect(stored?.size == (12 << 20) + 1000)
        withExtendedLifetime(moto) {}
    }

    @Test("with room in the budget two parts of a file are in flight at once, never three, and three parts' buffers held at most, at least half of the parts from the fourth gathered in the buffer of the part three before; once another request waits for the budget, the file keeps one part in flight and gives back a buffer at its next bytes",
          .timeLimit(.minutes(2)))
    func partsInFlight() async throws {
        let moto = try await MotoStore()
        let partSize = 5 << 20
        let store = RecordingObjectStore(moto.storage(prefix: "flight"), partDelay: .milliseconds(300))
        let roomy = PartMemoryBudget(limit: 64 << 20)
        var pipeline = ObjectPartPipeline(store: store, key: "flight/roomy", partSize: partSize, hold: PartMemoryHold(roomy)) {
            try await store.beginMultipartUpload(of: "flight/roomy", attributes: ObjectAttributes())
        }
        try await pipeline.write(ByteBuffer(repeating: 3, count: 9 * partSize))
        try await pipeline.settle()
        try await store.completeMultipartUpload(of: "flight/roomy", uploadID: try #require(pipeline.uploadID), parts: pipeline.parts)
        #expect(pipeline.parts.map(\.number) == Array(1...9))
        #expect(store.record.mostPartsInFlight == 2, "at most \(store.record.mostPartsInFlight) parts in flight at once")
        #expect(roomy.peak == 3 * partSize, "peak \(roomy.peak) bytes")
        // Each part from the fourth gathers in the buffer of the part three before it: no
        // part's memory is allocated (and faulted in) anew. Not every one: AsyncHTTPClient
        // lets go of a request's body on its event loop just after the answer's end has
        // woken the part's task, and a pipeline that clears the buffer first gets new memory.
        // Buffers cleared while still referenced elsewhere would give none; at least half is asked.
        let addresses = store.record.partAddresses
        let reused = (4...9).filter { addresses[$0] != nil && addresses[$0] == addresses[$0 - 3] }
        #expect(reused.count >= 3, "only parts \(reused) of 4-9 were gathered in the buffer of the part three before: \(addresses.sorted { $0.key < $1.key })")

        // A budget of three parts, all held: another request's take waits, until the file
        // sends its next part and gives back a buffer.
        let tight = PartMemoryBudget(limit: 3 * partSize)
        pipeline = ObjectPartPipeline(store: store, key: "flight/tight", partSize: partSize, hold: PartMemoryHold(tight)) {
            try await store.beginMultipartUpload(of: "flight/tight", attributes: ObjectAttributes())
        }
        try await pipeline.write(ByteBuffer(repeating: 4, count: 2 * partSize + 1))
        #expect(tight.held == 3 * partSize)
        let other = Task { try await tight.take(partSize) }
        try await Self.waitUntil(tight, hasWaiting: 1)
        // One more byte of the body: the oldest part landed, its buffer goes back.
        try await pipeline.write(ByteBuffer(repeating: 5, count: 1))
        let admitted = tight.waitingCount == 0
        #expect(admitted, "the other request still waits: the file kept its buffers")
        if !admitted { other.cancel() }
        _ = await other.result
        #expect(tight.held == 3 * partSize, "held \(tight.held) bytes")
        try await pipeline.write(ByteBuffer(repeating: 5, count: partSize - 2))
        try await pipeline.settle()
        try await store.completeMultipartUpload(of: "flight/tight", uploadID: try #require(pipeline.uploadID), parts: pipeline.parts)
        let stored = try await moto.contents().objects
        #expect(stored.first { $0.key == "flight/roomy" }?.size == 9 * partSize)
        #expect(stored.first { $0.key == "flight/tight" }?.size == 3 * partSize)
        withExtendedLifetime(moto) {}
    }

    @Test("8 files of 24 MiB at once to formpost serve on moto: with --s3-memory 16 its peak grows by at most 16 MiB and 24 MiB more (connections, the store's client, the allocator) over one small upload's; with --s3-memory 512, by more (each file holding three parts)")
    func boundedReceiver() async throws {
        #if os(Linux)
        let limited = try await Self.peakGrowth(memoryMiB: 16, uploads: 8, fileMiB: 24)
        let unlimited = try await Self.peakGrowth(memoryMiB: 512, uploads: 8, fileMiB: 24)
        print("formpost serve on moto, 8 × 24 MiB at once: peak growth \(limited) MiB with --s3-memory 16, \(unlimited) MiB with 512")
        #expect(limited <= 16 + 24, "the peak grew by \(limited) MiB with --s3-memory 16 (\(unlimited) MiB with 512)")
        #expect(unlimited > 16 + 24, "8 files at once with room for all grew the peak by \(unlimited) MiB only: the load does not show a limit")
        #endif
    }

    @Test("8 tus uploads of 20 MiB at once, each in two appends (the second reads the first's bytes past its parts back), to formpost serve on moto: with --s3-memory 16 its peak grows by at most 16 MiB and 24 MiB more, with 512 by more; each stored whole")
    func boundedAppends() async throws {
        #if os(Linux)
        let limited = try await Self.tusPeakGrowth(memoryMiB: 16)
        let unlimited = try await Self.tusPeakGrowth(memoryMiB: 512)
        print("formpost serve on moto, 8 tus uploads of 20 MiB in two appends at once: peak growth \(limited) MiB with --s3-memory 16, \(unlimited) MiB with 512")
        #expect(limited <= 16 + 24, "the peak grew by \(limited) MiB with --s3-memory 16 (\(unlimited) MiB with 512)")
        #expect(unlimited > 16 + 24, "8 uploads at once with room for all grew the peak by \(unlimited) MiB only: the load does not show a limit")
        #endif
    }

    /// 8 tus uploads of 20 MiB sent at once, each in two appends, to `formpost serve` on moto
    /// with `--s3-memory memoryMiB`: how much its peak resident set grew over one small
    /// upload's, in MiB; each upload is checked stored whole.
    static func tusPeakGrowth(memoryMiB: Int) async throws -> Int {
        #if os(Linux)
        let store = try await MotoStore()
        let directory = try SampleDirectory()
        let length = 20 << 20, firstAppend = (10 << 20) + 12_345
        var files: [(path: String, sha256: String)] = []
        for index in 0..<8 {
            let path = try directory.file("upload\(index).bin", size: length, seed: UInt8(index + 1))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try bytes.prefix(firstAppend).write(to: URL(fileURLWithPath: path + ".first"))
            try bytes.dropFirst(firstAppend).write(to: URL(fileURLWithPath: path + ".rest"))
            files.append((path, sha256Hex(bytes)))
        }
        let (serve, port) = try await Self.serve(on: store, in: directory, memoryMiB: memoryMiB)
        defer { serve.stop() }
        let base = "http://127.0.0.1:\(port)"
        let tus = TusCreationExtensionTests.tus, data = TusCreationExtensionTests.data
        let small = try directory.file("small.bin", size: 1_000, seed: 99)
        _ = try await TusCreationExtensionTests.curl(tus + data + ["-H", "Upload-Length: 1000", "--data-binary", "@" + small, base + "/files"])
        let before = try peakResidentKiB(of: serve.pid)
        let stored = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for file in files {
                group.addTask {
                    let created = try await TusCreationExtensionTests.curl(tus + ["-X", "POST", "-H", "Upload-Length: \(length)", base + "/files"])
                    let url = base + (try #require(created.headers["location"], "creation answered \(created.status)"))
                    let first = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: 0",
                                                                                       "--data-binary", "@" + file.path + ".first", url])
                    try #require(first.status == 204, "the first append answered \(first.status): \(first.body)")
                    let second = try await TusCreationExtensionTests.curl(tus + data + ["-X", "PATCH", "-H", "Upload-Offset: \(firstAppend)",
                                                                                        "--data-binary", "@" + file.path + ".rest", url])
                    try #require(second.status == 204, "the second append answered \(second.status): \(second.body)")
                    return (file.sha256, try await TusCreationExtensionTests.storedFile(url).sha256)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let growth = (try peakResidentKiB(of: serve.pid) - before) / 1024
        #expect(stored.count == 8 && stored.allSatisfy { $0.0 == $0.1 }, "the files stored are not the files sent")
        try await offPool { serve.stop() }
        return growth
        #else
        return 0
        #endif
    }

    /// `formpost serve` on a free port storing into `store` with `--s3-memory memoryMiB`.
    static func serve(on store: MotoStore, in directory: SampleDirectory, memoryMiB: Int) async throws -> (ChildProcess, Int) {
        let port = try freePort()
        let serve = try ChildProcess("env", MotoStore.credentials + [formpostBinary, "serve", "--port", String(port), "--dir", directory.path + "/unused",
                                                                     "--store", "s3://\(store.bucket)", "--s3-endpoint", store.endpoint, "--s3-memory", String(memoryMiB)],
                                     stdout: .discard, stderr: .discard)
        try await RawSocket.waitForListener(port: port, attempts: 1200)
        return (serve, port)
    }

    /// `uploads` files of `fileMiB` sent at once with `curl -F` to `formpost serve` on moto
    /// with `--s3-memory memoryMiB`: how much its peak resident set grew over one small
    /// upload's, in MiB; each file is checked stored whole.
    static func peakGrowth(memoryMiB: Int, uploads: Int, fileMiB: Int) async throws -> Int {
        #if os(Linux)
        let store = try await MotoStore()
        let directory = try SampleDirectory()
        var paths: [String] = []
        for index in 0..<uploads { paths.append(try directory.file("file\(index).bin", size: fileMiB << 20, seed: UInt8(index + 1))) }
        let (serve, port) = try await Self.serve(on: store, in: directory, memoryMiB: memoryMiB)
        defer { serve.stop() }
        let small = try directory.file("small.bin", size: 1_000, seed: 99)
        _ = try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(small)", "http://127.0.0.1:\(port)/"]) }
        let before = try peakResidentKiB(of: serve.pid)
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for path in paths {
                group.addTask { try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(path)", "http://127.0.0.1:\(port)/"]) } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let after = try peakResidentKiB(of: serve.pid)
        let stored = Set(try answers.map { try JSONDecoder().decode(Receipt.self, from: Data($0.utf8)).files.first?.sha256 ?? "" })
        let sent = Set(try paths.map { sha256Hex(try Data(contentsOf: URL(fileURLWithPath: $0))) })
        #expect(stored == sent, "the files stored are not the files sent")
        try await offPool { serve.stop() }
        return (after - before) / 1024
        #else
        return 0
        #endif
    }
}
