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

    /// Waits for a stream part's next bytes.
    private func awaitRead(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        let done = DispatchSemaphore(value: 0)
        let box = ReadBox(reader: reader, target: target)
        Task {
            box.run(await Result(catching: { try await box.reader.read(into: box.target) }))
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }
}

/// Carries a read across to the task that performs it; the stream's thread waits meanwhile.
private final class ReadBox: @unchecked Sendable {
    let reader: BodyChunkReader
    let target: UnsafeMutableRawBufferPointer
    var result: Result<Int, any Error>?

    init(reader: BodyChunkReader, target: UnsafeMutableRawBufferPointer) {
        self.reader = reader
        self.target = target
    }

    func run(_ outcome: Result<Int, any Error>) { result = outcome }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
