#if canImport(Darwin)
import FormPost
import Foundation

/// A ``BodyStreamSink`` on the output end of a bound stream pair
/// (`Stream.getBoundStreams(withBufferSize:inputStream:outputStream:)`), whose input end
/// URLSession reads. Apple platforms only: swift-corelibs-foundation has no bound pairs.
///
/// Every call comes from the pump's thread. The stream is not scheduled on a run loop, so
/// `write` blocks until the pair's buffer has room (`CFWriteStreamWrite` blocks until at
/// least one byte is written), and returns -1 or 0 once the input end is closed.
final class OutputStreamSink: BodyStreamSink {
    private let stream: OutputStream

    /// A sink writing into `stream`, which must not be open yet.
    init(_ stream: OutputStream) {
        self.stream = stream
    }

    func open() {
        stream.open()
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        bytes.withMemoryRebound(to: UInt8.self) { typed in
            guard let base = typed.baseAddress, !typed.isEmpty else { return 0 }
            return stream.write(base, maxLength: typed.count)
        }
    }

    func close() {
        stream.close()
    }
}
#endif
