/// The uploads of a background session that finished with no caller waiting for them —
/// while the app was suspended or not running, or started by an earlier run of the app —
/// in the order they finished: ``URLSessionTransport/finishedUploads``.
///
/// One iteration at a time: while one waits for the next result, another ends at once.
/// An iteration ends when its task is cancelled; results that come later wait for the
/// next iteration. The system's completion handler for the session's events
/// (``URLSessionTransport/handleEventsForBackgroundURLSession(completionHandler:)``) is
/// called only once every result delivered before the events finished was handled — the
/// iteration asked for the one after it — so iterate for as long as the transport lives.
public struct FinishedBackgroundUploads: AsyncSequence, Sendable {
    /// A finished upload.
    public typealias Element = BackgroundUploadResult
    /// An iteration never throws.
    public typealias Failure = Never

    let state: BackgroundSessionState?

    /// Iterates the finished uploads.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// An iteration never throws.
        public typealias Failure = Never

        let state: BackgroundSessionState?

        /// The next finished upload, when one comes; nil when the iteration's task is
        /// cancelled, another iteration is waiting, or the transport is not a background one.
        public mutating func next() async -> BackgroundUploadResult? {
            await state?.next()
        }
    }

    /// An iterator of the finished uploads.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(state: state)
    }
}
