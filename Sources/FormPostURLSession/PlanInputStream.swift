#if !canImport(Darwin)
import FormPost
import Foundation
import Multipart
import Synchronization

/// A body plan as a Foundation `InputStream`, for URLSession's streamed uploads on Linux
/// (FoundationNetworking reads it on its own thread; on Apple platforms URLSession gets the
/// input end of a bound stream pair instead: `StreamedUploadBody`). Memory and file bytes
/// are read on the calling thread; a stream part's bytes are awaited on a task while the
/// calling thread waits (``BlockingBodyReader``).
///
/// The status is shared between URLSession's reading thread and whoever closes the stream,
/// under a lock. ``close()`` ends a read waiting for a stream part at once: the read fails
/// (-1), and so does every later one, which FoundationNetworking turns into an aborted
/// transfer — never into the end of the body.
///
/// The first error the body met is kept in ``failure`` (shared with the transport's
/// exchange) and reported through ``streamError``, which this class implements; the base
/// class's, unimplemented in swift-corelibs-foundation, is never called.
final class PlanInputStream: InputStream {
    // Reads come from one thread at a time; the status is under a lock, and the reader
    // stops safely from any thread, so close() may come from any thread.

    /// The first error the body met, if any.
    let failure: BodyFailureRecord
    private let reader: BlockingBodyReader
    private let status = Mutex(Stream.Status.notOpen)

    /// A stream of `plan`'s body from its start, recording its first error in `failure`.
    init(plan: BodyPlan, failure: BodyFailureRecord = BodyFailureRecord()) {
        reader = BlockingBodyReader(plan: plan, chunkSize: 256 * 1024)
        self.failure = failure
        super.init(data: Data())
    }

    override func open() {
        status.withLock { if $0 == .notOpen { $0 = .open } }
    }

    /// Closes the stream from any thread; a read waiting for a stream part returns -1 at once.
    override func close() {
        status.withLock { $0 = .closed }
        reader.cancel()
    }

    override var streamStatus: Stream.Status { status.withLock { $0 } }
    override var streamError: (any Error)? { failure.error }

    /// True until the body's end was read: also when closed or failed, so that the next
    /// read reports the failure (FoundationNetworking takes false for the end of the body,
    /// and would finish a cut body as if complete). At the body's end, a read returns 0.
    override var hasBytesAvailable: Bool { streamStatus != .atEnd }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard length > 0 else { return 0 }
        let current = streamStatus
        guard current == .open else { return current == .atEnd ? 0 : -1 }
        do {
            let count = try reader.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
            if count == 0 { status.withLock { if $0 == .open { $0 = .atEnd } } }
            return count
        } catch {
            // A read ended by close() is no failure of the body.
            let closed = status.withLock { status -> Bool in
                if status == .closed { return true }
                status = .error
                return false
            }
            if !closed { failure.record(error) }
            return -1
        }
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>) -> Bool { false }
}
#endif
