import Dispatch
import Foundation
import Multipart

/// A body plan as a Foundation `InputStream`, for URLSession's streamed uploads. Memory
/// and file bytes are read synchronously; a stream part's bytes are awaited on a task
/// while URLSession's reading thread waits (never a thread of the cooperative pool).
///
/// Errors are reported through ``streamError``, which this class implements; the base
/// class's, unimplemented in swift-corelibs-foundation, is never called.
final class PlanInputStream: InputStream {
    private let reader: BodyChunkReader
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(plan: BodyPlan) {
        reader = plan.makeChunkReader(chunkSize: 256 * 1024)
        super.init(data: Data())
    }

    override func open() { status = .open }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { failure }
    override var hasBytesAvailable: Bool { status == .open && !reader.isFinished }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open || status == .reading else { return status == .atEnd ? 0 : -1 }
        let target = UnsafeMutableRawBufferPointer(start: buffer, count: length)
        do {
            var count = try reader.readWithoutSuspending(into: target)
            if count == 0, !reader.isFinished { count = try awaitRead(into: target) }
            if count == 0 { status = .atEnd }
            return count
        } catch {
            failure = error
            status = .error
            return -1
        }
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>) -> Bool { false }

    /// Waits for a stream part's next bytes, read by a task into a buffer of its own. The wait
    /// has a way out: when URLSession closes the stream (the upload was cancelled or failed),
    /// the read is abandoned and the task's late bytes go nowhere.
    private func awaitRead(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        let done = DispatchSemaphore(value: 0)
        let box = ReadBox(reader: reader, capacity: target.count)
        let task = Task {
            await box.run()
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if status == .closed {
                task.cancel()
                throw CancellationError()
            }
        }
        return try box.copy(into: target)
    }
}

/// A read performed by a task into memory of its own, handed over once complete; the
/// stream's thread waits meanwhile, or gives up.
private final class ReadBox: @unchecked Sendable {
    let reader: BodyChunkReader
    let scratch: UnsafeMutableRawBufferPointer
    var result: Result<Int, any Error>?

    init(reader: BodyChunkReader, capacity: Int) {
        self.reader = reader
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, capacity), alignment: 16)
    }

    deinit { scratch.deallocate() }

    func run() async {
        do {
            result = .success(try await reader.read(into: scratch))
        } catch {
            result = .failure(error)
        }
    }

    /// Copies what the completed read produced into `target`.
    func copy(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = try result!.get()
        if count > 0 { target.baseAddress!.copyMemory(from: scratch.baseAddress!, byteCount: min(count, target.count)) }
        return count
    }
}
