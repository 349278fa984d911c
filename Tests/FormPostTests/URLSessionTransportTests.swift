import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
@testable import FormPost
import FormPostFoundation
@testable import FormPostURLSession
import FormPostServer
import Multipart
import Synchronization
import Testing

/// The URLSession transport's parts that every platform shares: the pump that writes a
/// streamed body on Apple platforms (driven here by a sink in memory), the Linux body
/// stream, the route of each request, and how a failed body reaches the caller through a
/// real URLSession upload.
@Suite("URLSession transport: streamed bodies, their failures, and routes")
struct URLSessionTransportTests {
    // MARK: - The pump

    @Test("the pump writes exactly the plan's bytes (text, a file, a stream part of known length), in partial writes, then closes the sink")
    func pumpDeliversExactBytes() async throws {
        let directory = try SampleDirectory()
        var form = MultipartForm()
        form.append(name: "title", value: "Hello ✓")
        try form.append(name: "file", fileAt: try directory.file("sample.dat", size: 300_001))
        form.append(name: "stream", length: 100_000) { Chunks(chunks: [[UInt8](repeating: 1, count: 60_000), [UInt8](repeating: 2, count: 40_000)]) }
        form.append(name: "after", value: "the end")
        let plan = try form.plan()
        let expected = [UInt8](try await plan.encodedData())
        let sink = MemorySink(maxPerWrite: 7_777)
        let failures = FailureLog()
        let pump = BodyStreamPump(plan: plan, sink: sink, chunkSize: 64 * 1024, onFailure: failures.add)
        pump.start()
        let outcome = await Self.value(within: 30) { await pump.finished() }
        #expect(outcome == .delivered)
        let written = sink.snapshot
        #expect(written.bytes.count == expected.count)
        #expect(written.bytes == expected)
        #expect(written.opened && written.closed)
        #expect(written.writes > expected.count / 7_777)
        #expect(pump.failure.error == nil && failures.errors.isEmpty)
    }

    @Test("a file that grows or shrinks while the pump reads it: the first error is kept, onFailure called once, the sink never closed", arguments: [-3, 5])
    func pumpFileSizeChanged(delta: Int) async throws {
        let directory = try SampleDirectory()
        let path = try directory.file("changing.bin", size: 10_000)
        var form = MultipartForm()
        form.append(name: "before", value: "x")
        try form.append(name: "upload", fileAt: path)
        let plan = try form.plan()
        // The file changes size once the first bytes were written, the file's reading begun.
        let sink = MemorySink(onFirstWrite: { #expect(truncate(path, off_t(10_000 + delta)) == 0) })
        let failures = FailureLog()
        let pump = BodyStreamPump(plan: plan, sink: sink, chunkSize: 1024, onFailure: failures.add)
        pump.start()
        #expect(await Self.value(within: 30) { await pump.finished() } == .failed)
        guard case .fileSizeChanged(_, let failedPath, let expected, let actual)? = pump.failure.error as? MultipartError else {
            Issue.record("unexpected \(String(describing: pump.failure.error))")
            return
        }
        #expect(failedPath == path && expected == 10_000 && actual == Int64(10_000 + delta))
        #expect(failures.errors.count == 1 && (failures.errors.first as? MultipartError) == (pump.failure.error as? MultipartError))
        #expect(!sink.snapshot.closed, "a cut body must never look complete")
        #expect(Int64(sink.snapshot.bytes.count) < plan.contentLength ?? 0, "the failing read's bytes are never written")
    }

    @Test("a stream part yielding fewer bytes than declared fails the pump with streamLengthMismatch, and onFailure is called")
    func pumpStreamTooShort() async throws {
        var form = MultipartForm()
        form.append(name: "s", length: 5) { Chunks(chunks: [[1, 2, 3]]) }
        let plan = try form.plan()
        let sink = MemorySink()
        let failures = FailureLog()
        let pump = BodyStreamPump(plan: plan, sink: sink, onFailure: failures.add)
        pump.start()
        #expect(await Self.value(within: 30) { await pump.finished() } == .failed)
        guard case .streamLengthMismatch(_, let declared, let produced)? = pump.failure.error as? MultipartError else {
            Issue.record("unexpected \(String(describing: pump.failure.error))")
            return
        }
        #expect(declared == 5 && produced == 3)
        #expect(failures.errors.count == 1)
        #expect(!sink.snapshot.closed)
    }

    @Test("a sink that takes no more (returns 0 or -1) ends the pump: no failure, no onFailure, not closed", arguments: [0, -1])
    func pumpRefused(refusal: Int) async throws {
        let directory = try SampleDirectory()
        let form = try sampleForm(directory, fileSize: 1_000_000)
        let sink = MemorySink(refuseAfter: 100_000, refusal: refusal)
        let failures = FailureLog()
        let pump = BodyStreamPump(plan: try form.plan(), sink: sink, chunkSize: 16 * 1024, onFailure: failures.add)
        pump.start()
        #expect(await Self.value(within: 30) { await pump.finished() } == .refused)
        #expect(sink.snapshot.bytes.count == 100_000)
        #expect(pump.failure.error == nil && failures.errors.isEmpty)
        #expect(!sink.snapshot.closed)
    }

    @Test("stop() from outside ends a pump waiting for a stream part that never yields (nor heeds cancellation)")
    func pumpStoppedWhileAwaiting() async throws {
        let gate = Gate()
        defer { gate.open() }
        var form = MultipartForm()
        form.append(name: "title", value: "x")
        form.append(name: "never", length: nil) { Stalled(gate: gate) }
        let sink = MemorySink()
        let failures = FailureLog()
        let pump = BodyStreamPump(plan: try form.plan(), sink: sink, onFailure: failures.add)
        pump.start()
        // The bytes before the stream part are written, then the pump waits.
        #expect(await Self.value(within: 30) { await sink.waitForBytes() } == true)
        try await Task.sleep(for: .milliseconds(100))
        #expect(pump.outcome == nil)
        pump.stop()
        // Without stop() the pump would wait for ever: ending within the bound is the point.
        #expect(await Self.value(within: 30) { await pump.finished() } == .stopped)
        #expect(pump.failure.error == nil && failures.errors.isEmpty)
        #expect(!sink.snapshot.closed)
    }

    @Test("a pump stopped before it started never starts, and says so")
    func pumpStoppedFirst() async throws {
        let sink = MemorySink()
        let pump = BodyStreamPump(plan: try MultipartForm().plan(), sink: sink, onFailure: { _ in })
        pump.stop()
        pump.start()
        #expect(await Self.value(within: 30) { await pump.finished() } == .stopped)
        #expect(!sink.snapshot.opened)
    }

    // MARK: - The Linux body stream

    #if !canImport(Darwin)

    @Test("closing the plan's InputStream from another thread ends a read waiting for a stream part at once; a close is no failure")
    func inputStreamCloseEndsWaitingRead() async throws {
        let gate = Gate()
        defer { gate.open() }
        var form = MultipartForm()
        form.append(name: "never", length: nil) { Stalled(gate: gate) }
        let plan = try form.plan()
        let stream = PlanInputStream(plan: plan)
        stream.open()
        // Read on one thread, closed from this one: what the stream is for.
        nonisolated(unsafe) let reading = stream
        let reads = Mutex<[Int]>([])
        let thread = Thread {
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
            defer { buffer.deallocate() }
            while true {
                let count = reading.read(buffer, maxLength: 4096)
                reads.withLock { $0.append(count) }
                if count <= 0 { return }
            }
        }
        thread.start()
        try await Task.sleep(for: .milliseconds(300))
        #expect(reads.withLock { $0.last.map { $0 > 0 } } == true, "the part's header bytes were read, then the read waits")
        stream.close()
        let ended = await Self.value(within: 30) { () async -> Bool in
            while reads.withLock({ $0.last.map { $0 <= 0 } ?? false }) == false { try? await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        #expect(ended == true)
        #expect(reads.withLock { $0.last } == -1, "a closed stream fails its read: never the body's end")
        #expect(stream.streamError == nil && stream.failure.error == nil)
        #expect(stream.streamStatus == .closed)
        #expect(stream.hasBytesAvailable, "FoundationNetworking must read (and fail) rather than take the end of the body")
    }

    @Test("the plan's InputStream records a failing body in its failure record and streamError")
    func inputStreamRecordsFailure() throws {
        var form = MultipartForm()
        form.append(name: "s", length: 5) { Chunks(chunks: [[1, 2, 3, 4, 5, 6, 7]]) }
        let record = BodyFailureRecord()
        let stream = PlanInputStream(plan: try form.plan(), failure: record)
        stream.open()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 20)
        defer { buffer.deallocate() }
        var last = 1
        while last > 0 { last = stream.read(buffer, maxLength: 1 << 20) }
        #expect(last == -1 && stream.streamStatus == .error)
        guard case .streamLengthMismatch? = record.error as? MultipartError else {
            Issue.record("unexpected \(String(describing: record.error))")
            return
        }
        #expect((stream.streamError as? MultipartError) == (record.error as? MultipartError))
    }

    #endif

    // MARK: - Routes

    @Test("each request's session and task kind", arguments: [
        // (has body, length, uploadsFromFile, background) → route
        (false, nil, false, false, URLSessionTaskRoute(session: .main, kind: .bodiless)),
        (false, nil, true, true, URLSessionTaskRoute(session: .companion, kind: .bodiless)),
        (true, 10, false, false, URLSessionTaskRoute(session: .main, kind: .uploadFromData)),
        (true, 1_000, false, false, URLSessionTaskRoute(session: .main, kind: .uploadFromData)),
        (true, 1_001, false, false, URLSessionTaskRoute(session: .main, kind: .uploadStreamed)),
        (true, nil, false, false, URLSessionTaskRoute(session: .main, kind: .uploadStreamed)),
        (true, 10, true, false, URLSessionTaskRoute(session: .main, kind: .uploadFromFile)),
        (true, nil, true, false, URLSessionTaskRoute(session: .main, kind: .uploadFromFile)),
        (true, 10, false, true, URLSessionTaskRoute(session: .main, kind: .uploadFromFile)),
        (true, nil, true, true, URLSessionTaskRoute(session: .main, kind: .uploadFromFile)),
    ] as [(Bool, Int64?, Bool, Bool, URLSessionTaskRoute)])
    func route(hasBody: Bool, length: Int64?, uploadsFromFile: Bool, isBackground: Bool, expected: URLSessionTaskRoute) {
        let route = URLSessionTaskRoute.choose(hasBody: hasBody, bodyLength: length, inMemoryLimit: 1_000, uploadsFromFile: uploadsFromFile, isBackground: isBackground)
        #expect(route == expected)
    }

    @Test("the companion session's configuration is a default one keeping the main one's header fields and request timeout")
    func companionConfiguration() {
        let main = URLSessionConfiguration.default
        main.httpAdditionalHeaders = ["X-Test": "1"]
        main.timeoutIntervalForRequest = 17
        let companion = URLSessionTransport.companionConfiguration(for: main)
        #expect(companion !== main)
        #expect(companion.identifier == nil)
        #expect(companion.httpAdditionalHeaders?["X-Test"] as? String == "1")
        #expect(companion.timeoutIntervalForRequest == 17)
    }

    @Test("a transport routed as a background one uploads from files and sends bodiless requests through its companion session, both at once")
    func backgroundRouting() async throws {
        // Linux has no background sessions: the background routing runs on an ordinary one.
        let configuration = URLSessionConfiguration.default
        configuration.httpAdditionalHeaders = ["X-Test": "1"]
        let bodies = try SampleDirectory()
        let transport = URLSessionTransport(configuration: configuration, inMemoryLimit: 10_000_000, uploadsFromFile: false, challengeHandler: nil, isBackground: true,
                                            bodyDirectory: BackgroundBodyDirectory(path: bodies.path))
        defer { transport.invalidate() }
        #expect(transport.uploadsFromFile)
        #expect(transport.hasCompanionSession)
        // Each session numbers its tasks from 1: the two exchanges must not be confused.
        let client = FormPostClient(transport: transport)
        let server = try TestServer()
        let (digest, echo) = try await server.run { base in
            async let digest = client.send(.bytes(Array(repeating: 7, count: 300_000)), to: base.appendingPathComponent("slow")).validate().decode(Digest.self)
            async let echo = client.send(nil, to: base.appendingPathComponent("echo"), method: .get).validate().decode(Echo.self)
            return try await (digest, echo)
        }
        #expect(digest.length == 300_000 && digest.sha256 == sha256Hex([UInt8](repeating: 7, count: 300_000)))
        #expect(echo.method == "GET" && echo.header("X-Test") == "1")
        // The body went from a file in the session's directory, removed once sent.
        #expect(try FileManager.default.contentsOfDirectory(atPath: bodies.path).isEmpty)
    }

    // MARK: - Failed bodies through URLSession

    @Test("the exchange's own failure record decides the error: the body's failure first, then the caller's cancellation, then URLSession's error")
    func completionErrorPrecedence() {
        let url = URL(string: "http://127.0.0.1:1/x")!
        let failure = MultipartError.streamLengthMismatch(part: PartLabel(position: 1, name: "s"), declared: 5, produced: 3)
        let cancelled = URLError(.cancelled)
        #expect(URLSessionTransport.completionError(cancelled, bodyFailure: failure, cancelled: true, url: url) as? MultipartError == failure)
        #expect(URLSessionTransport.completionError(URLError(.unknown), bodyFailure: failure, cancelled: false, url: url) as? MultipartError == failure)
        #expect(URLSessionTransport.completionError(URLError(.unknown), bodyFailure: nil, cancelled: true, url: url) is CancellationError)
        let translated = URLSessionTransport.completionError(URLError(.timedOut), bodyFailure: nil, cancelled: false, url: url)
        guard case .timedOut? = translated as? UploadError else {
            Issue.record("expected UploadError.timedOut, got \(translated)")
            return
        }
    }

    @Test("a streamed upload of a file that grows or shrinks while sent throws fileSizeChanged, not a transport error", arguments: [-3, 5])
    func streamedUploadFileSizeChanged(delta: Int) async throws {
        let size = 20_000_000
        let directory = try SampleDirectory()
        let path = try directory.file("growing.bin", size: size)
        var built = MultipartForm()
        built.append(name: "title", value: "x")
        try built.append(name: "upload", fileAt: path)
        let form = built
        let transport = URLSessionTransport(inMemoryLimit: 0)
        defer { transport.invalidate() }
        let changed = Mutex(false)
        let server = try TestServer()
        let outcome = try await server.run { base -> (any Error)? in
            do {
                _ = try await FormPostClient(transport: transport).upload(form, to: base.appendingPathComponent("slow"), strategy: .streaming) { progress in
                    // Once the first bytes went out, the file changes size.
                    guard progress.bytesSent > 0, changed.withLock({ done in defer { done = true }; return !done }) else { return }
                    _ = truncate(path, off_t(size + delta))
                }
                return nil
            } catch {
                return error
            }
        }
        #expect(changed.withLock { $0 })
        guard case .fileSizeChanged(_, let failedPath, let expected, let actual)? = outcome as? MultipartError else {
            Issue.record("expected fileSizeChanged, got \(String(describing: outcome))")
            return
        }
        #expect(failedPath == path && expected == Int64(size) && actual == Int64(size + delta))
    }

    @Test("a streamed upload whose stream part yields fewer bytes than declared throws streamLengthMismatch (the exchange's record, not the request's stream)")
    func streamedUploadStreamTooShort() async throws {
        var built = MultipartForm()
        built.append(name: "title", value: "x")
        built.append(name: "s", length: 500_000) { Chunks(chunks: [[UInt8](repeating: 3, count: 200_000)]) }
        let form = built
        let transport = URLSessionTransport(inMemoryLimit: 0)
        defer { transport.invalidate() }
        let server = try TestServer()
        let outcome = try await server.run { base -> (any Error)? in
            do {
                _ = try await FormPostClient(transport: transport).upload(form, to: base.appendingPathComponent("digest"), strategy: .streaming)
                return nil
            } catch {
                return error
            }
        }
        guard case .streamLengthMismatch(_, let declared, let produced)? = outcome as? MultipartError else {
            Issue.record("expected streamLengthMismatch, got \(String(describing: outcome))")
            return
        }
        #expect(declared == 500_000 && produced == 200_000)
    }

    @Test("cancelling a streamed upload that waits for a stream part ends it promptly with CancellationError")
    func streamedUploadCancelledWhileAwaiting() async throws {
        let gate = Gate()
        defer { gate.open() }
        var built = MultipartForm()
        built.append(name: "title", value: "x")
        built.append(name: "never", length: nil) { Stalled(gate: gate) }
        let form = built
        let transport = URLSessionTransport(inMemoryLimit: 0)
        defer { transport.invalidate() }
        let server = try TestServer()
        let outcome = try await server.run { base -> String in
            let upload = Task {
                try await FormPostClient(transport: transport).upload(form, to: base.appendingPathComponent("digest"), strategy: .streaming)
            }
            // Cancelled once the body's reading waits for the part (libcurl may first wait
            // up to 1 s for a 100 Continue).
            guard await Self.value(within: 10, { await gate.waitForWaiter() }) == true else { return "the part was never asked for bytes" }
            try await Task.sleep(for: .milliseconds(100))
            upload.cancel()
            // Before, it never ended: a bound that a loaded machine meets is enough.
            let result = await Self.value(within: 30) { await upload.result }
            guard let result else { return "still running 30 s after the cancellation" }
            switch result {
            case .success(let response): return "answered \(response.status)"
            case .failure(let error): return String(describing: type(of: error))
            }
        }
        #expect(outcome == "CancellationError")
    }

    // MARK: - Helpers

    /// `operation`'s value, or nil if it has none within `seconds` (the operation is then
    /// left running: a hung pump must fail the test, not hang it).
    static func value<T: Sendable>(within seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> T? {
        await withCheckedContinuation { continuation in
            let once = ResumeOnce(continuation)
            Task { once.resume(returning: await operation()) }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                once.resume(returning: nil)
            }
        }
    }
}

/// A continuation resumed by the first of several racing callers.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(returning value: T?) {
        continuation.withLock { continuation in
            continuation?.resume(returning: value)
            continuation = nil
        }
    }
}

/// A ``BodyStreamSink`` in memory: takes at most `maxPerWrite` bytes a write, refuses
/// (with `refusal`) once it holds `refuseAfter` bytes, and calls `onFirstWrite` before
/// taking its first bytes.
private final class MemorySink: BodyStreamSink, @unchecked Sendable {
    struct Snapshot {
        var bytes: [UInt8] = []
        var opened = false
        var closed = false
        var writes = 0
    }

    private let state = Mutex(Snapshot())
    private let maxPerWrite: Int
    private let refuseAfter: Int?
    private let refusal: Int
    private let onFirstWrite: (@Sendable () -> Void)?

    init(maxPerWrite: Int = .max, refuseAfter: Int? = nil, refusal: Int = 0, onFirstWrite: (@Sendable () -> Void)? = nil) {
        self.maxPerWrite = maxPerWrite
        self.refuseAfter = refuseAfter
        self.refusal = refusal
        self.onFirstWrite = onFirstWrite
    }

    /// What the sink holds now.
    var snapshot: Snapshot { state.withLock { $0 } }

    /// Waits until the sink holds some bytes; true then.
    func waitForBytes() async -> Bool {
        while snapshot.bytes.isEmpty { try? await Task.sleep(for: .milliseconds(10)) }
        return true
    }

    func open() { state.withLock { $0.opened = true } }

    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        if state.withLock({ $0.writes == 0 }) { onFirstWrite?() }
        return state.withLock { state in
            state.writes += 1
            let room = refuseAfter.map { $0 - state.bytes.count } ?? .max
            guard room > 0 else { return refusal }
            let count = min(bytes.count, maxPerWrite, room)
            state.bytes += bytes[0..<count]
            return count
        }
    }

    func close() { state.withLock { $0.closed = true } }
}

/// The errors an `onFailure` closure was called with.
private final class FailureLog: Sendable {
    private let log = Mutex<[any Error]>([])

    var errors: [any Error] { log.withLock { $0 } }

    @Sendable func add(_ error: any Error) { log.withLock { $0.append(error) } }
}

/// A gate tasks wait at until it opens; it never heeds cancellation.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    /// Waits until a task waits at the gate; true then.
    func waitForWaiter() async -> Bool {
        while state.withLock({ $0.waiting.isEmpty && !$0.open }) { try? await Task.sleep(for: .milliseconds(10)) }
        return true
    }

    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// A stream part that yields nothing until its gate opens, then ends — deaf to cancellation.
private struct Stalled: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let gate: Gate

    struct AsyncIterator: AsyncIteratorProtocol {
        let gate: Gate
        mutating func next() async throws -> [UInt8]? {
            await gate.wait()
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(gate: gate) }
}
