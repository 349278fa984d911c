import HTTPTypes
import Logging
import NIOConcurrencyHelpers

/// The one line a receiver logs, at info level, for each request it answers: the message
/// `METHOD PATH STATUS` and, as metadata for log handlers that keep fields apart (such as
/// `formpost serve --log-format json`), `method`, `path`, `status`, `bytes` (the request
/// body's bytes the receiver read), `duration` (seconds, to the millisecond), `client`
/// (the address the request counts under: the peer, or the client a trusted proxy
/// forwarded), `upload` (the resumable upload the request concerns, when one does) and
/// what the receiver adds (a multipart form's `files`, `fields` and `file_bytes`).
///
/// Begin one when the request arrives, read the body through ``counting(_:)``, and
/// ``log(_:answered:client:upload:details:to:)`` once the answer is known.
struct RequestLogLine: Sendable {
    private let started = ContinuousClock.now
    private let received = NIOLockedValueBox<Int64>(0)

    /// `request` with its body counted into the line's `bytes`.
    func counting(_ request: ReceiverRequest) -> ReceiverRequest {
        var counted = request
        let received = self.received
        counted.body = ReceiverRequestBody(WatchedBody(base: request.body) { _, total in
            received.withLockedValue { $0 = total }
        })
        return counted
    }

    /// Logs the line of `request`, answered `response`, to `logger` at info level.
    func log(_ request: ReceiverRequest, answered response: ReceiverResponse, upload: String? = nil,
             details: Logger.Metadata = [:], to logger: Logger) {
        let elapsed = (ContinuousClock.now - started).components
        let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
        var metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)",
            "path": "\(request.path)",
            "status": .stringConvertible(response.status.code),
            "bytes": .stringConvertible(received.withLockedValue { $0 }),
            "duration": .stringConvertible(Double(milliseconds) / 1000),
            "client": "\(request.loggedClient)",
        ]
        if let upload { metadata["upload"] = "\(upload)" }
        metadata.merge(details) { current, _ in current }
        logger.info("\(request.method) \(request.path) \(response.status.code)", metadata: metadata)
    }

    /// The ID of the resumable upload under `basePath` that `request` concerns: the last
    /// segment of its path when it names one, else that of the `Location` a creation
    /// answered; nil when neither does.
    static func upload(of request: ReceiverRequest, answered response: ReceiverResponse, basePath: String) -> String? {
        let prefix = basePath.hasSuffix("/") ? basePath : basePath + "/"
        let path = request.path
        if path.hasPrefix(prefix), !path.dropFirst(prefix.count).isEmpty {
            return String(path.dropFirst(prefix.count).prefix { $0 != "/" })
        }
        guard let location = response.headers[.location], let last = location.split(separator: "/").last else { return nil }
        return String(last.prefix { $0 != "?" })
    }
}
