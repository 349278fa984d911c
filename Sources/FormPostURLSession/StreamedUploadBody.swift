import FormPost
import Foundation
import Multipart

/// The body of one streamed URLSession upload (`uploadTask(withStreamedRequest:)`): the
/// `InputStream` handed to URLSession from `needNewBodyStream`, the record of the body's
/// first failure, and the means to stop producing it. Each `needNewBodyStream` makes a new one.
///
/// - On Apple platforms URLSession reads the input end of a bound stream pair
///   (`Stream.getBoundStreams`), the supported way to stream a body of one's own; a
///   `BodyStreamPump` writes the plan into the output end on a dedicated thread, and
///   cancels the task through `onFailure` when the body fails.
/// - On Linux (swift-corelibs-foundation has no bound pairs, and sends an empty body for a
///   stream opened on a pipe) URLSession reads a `PlanInputStream` on its own thread; a
///   failing body fails the read, which aborts the transfer (`onFailure` is not used: a
///   task cancelled from within its own read would wait for that read to end).
final class StreamedUploadBody: @unchecked Sendable {
    // @unchecked: `stream` is handed to URLSession once; afterwards it is only closed —
    // on Apple platforms once URLSession reads it no more (discard()), on Linux through
    // PlanInputStream's close(), which is safe from any thread. The rest is Sendable.

    /// The stream for URLSession; nil on Apple platforms if no bound pair could be made
    /// (then ``failure`` says so).
    let stream: InputStream?
    /// The first error the body met, if any.
    let failure: BodyFailureRecord
    #if canImport(Darwin)
    private let pump: BodyStreamPump?
    private let onFailure: @Sendable (any Error) -> Void
    #endif

    /// The size of the bound pair's buffer, and of the pump's reads, on Apple platforms.
    static let bufferSize = 256 * 1024

    /// Prepares `plan`'s body; nothing is read before ``start()``. `onFailure` is called with
    /// the body's first error where the platform needs the task cancelled for it.
    init(plan: BodyPlan, onFailure: @escaping @Sendable (any Error) -> Void) {
        let failure = BodyFailureRecord()
        self.failure = failure
        #if canImport(Darwin)
        self.onFailure = onFailure
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: Self.bufferSize, inputStream: &input, outputStream: &output)
        if let input, let output {
            stream = input
            pump = BodyStreamPump(plan: plan, sink: OutputStreamSink(output), chunkSize: Self.bufferSize, failure: failure, onFailure: onFailure)
        } else {
            stream = nil
            pump = nil
            failure.record(UploadError.transport("no bound stream pair could be made for the body"))
        }
        #else
        stream = PlanInputStream(plan: plan, failure: failure)
        #endif
    }

    /// Starts producing the body, once URLSession has the stream (on Apple platforms, a
    /// body without a stream calls `onFailure` instead). On Linux URLSession's reads
    /// produce it, and this does nothing.
    func start() {
        #if canImport(Darwin)
        if let pump {
            pump.start()
        } else if let error = failure.error {
            onFailure(error)
        }
        #endif
    }

    /// Stops producing the body while URLSession may still read it (the upload was
    /// cancelled): no byte more is produced, and a wait for a stream part ends at once.
    /// The reader never sees a normal end: on Apple platforms the output end stays open;
    /// on Linux the closed stream fails its next read, which aborts the transfer.
    func stop() {
        #if canImport(Darwin)
        pump?.stop()
        #else
        stream?.close()
        #endif
    }

    /// Discards the body once URLSession reads it no more (its task ended, or it asked for a
    /// new stream): as ``stop()``, and on Apple platforms closes the pair's input end too,
    /// which ends a write blocked in the output end if URLSession left the input end open.
    func discard() {
        stop()
        #if canImport(Darwin)
        stream?.close()
        #endif
    }
}
