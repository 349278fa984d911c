import FormPost
import Synchronization

/// The first error met while a body was produced for a transport: a file that changed
/// size, a stream part that yielded more or fewer bytes than declared, a failing stream.
///
/// URLSession reports a body that could not be produced only as a failed or cancelled
/// task, without the reason; the transport reads the reason here. One record belongs to
/// one production of the body (one stream handed to URLSession), and is shared between
/// the thread that produces the body and the delegate that completes the exchange.
final class BodyFailureRecord: Sendable {
    private let first = Mutex<(any Error)?>(nil)

    /// Creates an empty record.
    init() {}

    /// Records `error` unless an error was recorded before; returns whether it was the first.
    @discardableResult
    func record(_ error: any Error) -> Bool {
        first.withLock { first in
            guard first == nil else { return false }
            first = error
            return true
        }
    }

    /// The first error recorded, if any.
    var error: (any Error)? { first.withLock { $0 } }
}
