import AsyncHTTPClient
import NIOCore

/// Writes a body to AsyncHTTPClient's stream writer from the request's event loop (the one
/// AsyncHTTPClient runs the body stream and the delegate on): it reads the next buffer when
/// the connection has taken an earlier one, with at most `window` buffers handed over and
/// not yet taken.
///
/// A buffer is taken when the connection's write of it has completed, which AsyncHTTPClient
/// reports to the delegate alone (``partSent()``, from `didSendRequestPart`). The writer's
/// own future cannot tell: while the request produces, AsyncHTTPClient completes it at once,
/// and pauses the body only when the connection's channel is not writable — which an HTTP/2
/// stream whose HEADERS the shared connection holds back never reports, and which reaches a
/// request on another loop only after a hop, while the pump goes on. Counting by the writer's
/// futures, each upload read its whole file into buffers queued below. The writer's futures
/// still pause the pump (a paused request's future completes when the connection resumes it)
/// and fail it.
///
/// Bytes in memory and file bytes the page cache holds are read right there, without
/// blocking (`preadv2` with `RWF_NOWAIT`); bytes that must come from the disk are read on
/// NIO's thread pool, a stream's are awaited by a task, and the pump goes on when they are in.
///
/// Keeping production on an event loop is what makes TLS uploads cheap: no wake-up of a
/// task per buffer, and when the pool's connection runs on the same loop (a new connection
/// is made on the request's loop, an idle one there is preferred) each buffer is encrypted
/// by the core that just filled it, while it is still in that core's cache.
///
/// Its state belongs to the event loop: every method but ``start()`` and ``stop(_:)`` runs
/// there (those two hop to it).
final class EventLoopBodyPump: @unchecked Sendable {
    private let state: PlanByteBuffers.IteratorState
    private let writer: HTTPClient.Body.StreamWriter
    private let eventLoop: any EventLoop
    private let window: Int
    private let done: EventLoopPromise<Void>
    /// Buffers handed to the writer that the connection has not written yet.
    private var untaken = 0
    private var ended = false

    init(state: PlanByteBuffers.IteratorState, writer: HTTPClient.Body.StreamWriter, eventLoop: any EventLoop, window: Int) {
        self.state = state
        self.writer = writer
        self.eventLoop = eventLoop
        self.window = window
        done = eventLoop.makePromise(of: Void.self)
    }

    /// Starts writing; the future completes on the event loop once the last buffer has been
    /// handed to the writer (so that AsyncHTTPClient ends the body right behind it), or
    /// fails with the first error of a read or a write.
    func start() -> EventLoopFuture<Void> {
        eventLoop.execute { self.pump() }
        return done.futureResult
    }

    private func pump() {
        while !ended, !state.isReadingOffLoop, untaken < window {
            let buffer: ByteBuffer?
            do {
                buffer = try state.nextBufferWithoutBlocking()
            } catch {
                return end(.failure(error))
            }
            if let buffer {
                write(buffer)
            } else if state.isFinished {
                return end(.success(()))
            } else {
                return readOffLoop()
            }
        }
    }

    /// Records that the connection wrote one of the buffers handed over, and goes on pumping.
    /// Called on the event loop, from the delegate's `didSendRequestPart`.
    func partSent() {
        eventLoop.assertInEventLoop()
        guard untaken > 0 else { return }
        untaken -= 1
        // Not inline: the delegate is told within the connection's write, and pumping from
        // there would write the next buffer from inside it.
        eventLoop.execute { self.pump() }
    }

    /// Ends the pump with `error` from any thread, because its exchange is over (failed, or
    /// answered before the body was all sent): the buffers handed over will never be reported
    /// written, and nothing more is read.
    func stop(_ error: any Error) {
        eventLoop.execute { self.end(.failure(error)) }
    }

    private func write(_ buffer: ByteBuffer) {
        untaken += 1
        writer.write(.byteBuffer(buffer)).hop(to: eventLoop).whenComplete { result in
            switch result {
            case .success:
                // A paused request's write completes when the connection resumes it. Not
                // inline: a write the request takes at once completes at once, and pumping
                // from here would recurse once per buffer.
                self.eventLoop.execute { self.pump() }
            case .failure(let error):
                self.end(.failure(error))
            }
        }
    }

    /// Reads the next buffer off the loop (from the disk on NIO's thread pool, or a stream),
    /// then goes on pumping on the loop.
    private func readOffLoop() {
        state.nextBufferOffLoop(then: eventLoop) { result in
            guard !self.ended else { return }
            switch result {
            case .success(let buffer):
                if let buffer { self.write(buffer) }
                self.pump()
            case .failure(let error):
                self.end(.failure(error))
            }
        }
    }

    private func end(_ result: Result<Void, any Error>) {
        guard !ended else { return }
        ended = true
        // A stream part waiting for bytes that will never be sent stops being iterated.
        state.cancelOffLoopRead()
        done.completeWith(result)
    }
}
