import Foundation
import Multipart
import Synchronization

/// Hands out its `InputStream` once; a second request is an error.
final class OneShotInputStream: Sendable {
    private let stream: Mutex<InputStreamBox?>

    init(_ stream: InputStream) {
        self.stream = Mutex(InputStreamBox(stream))
    }

    func take(part: PartLabel) throws -> any ByteChunkIterator {
        let taken = stream.withLock { box -> InputStreamBox? in
            defer { box = nil }
            return box
        }
        guard let taken else { throw MultipartError.streamAlreadyConsumed(part: part) }
        return InputStreamChunkIterator(taken.stream)
    }
}

/// Carries a non-Sendable `InputStream` into the one task that reads it.
struct InputStreamBox: @unchecked Sendable {
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }
}
