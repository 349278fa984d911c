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
/// An upload's ID is the capability to go on with it where signed URLs are off: no log
/// line holds a whole one. The path names an upload by the first 8 of its 32 hex digits
/// and `…` (``ReceiverRequest/loggedPath``), as does `upload` (``shortID(_:)``); the
/// query, where a signature or an upload's token is, is never logged.
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
            "path": "\(request.loggedPath)",
            "status": .stringConvertible(response.status.code),
            "bytes": .stringConvertible(received.withLockedValue { $0 }),
            "duration": .stringConvertible(Double(milliseconds) / 1000),
            "client": "\(request.loggedClient)",
        ]
        if let upload { metadata["upload"] = "\(upload)" }
        metadata.merge(details) { current, _ in current }
        logger.info("\(request.method) \(request.loggedPath) \(response.status.code)", metadata: metadata)
    }

    /// The resumable upload under `basePath` that `request` concerns, by ``shortID(_:)``:
    /// the one its path names, else the one of the `Location` a creation answered; nil
    /// when neither names one.
    static func upload(of request: ReceiverRequest, answered response: ReceiverResponse, basePath: String) -> String? {
        if case .upload(let id) = UploadResourcePath(request.path, basePath: basePath) { return shortID(id) }
        guard let location = response.headers[.location], let last = location.split(separator: "/").last else { return nil }
        let id = last.prefix { $0 != "?" }
        return UploadStore.isValidID(id) ? shortID(String(id)) : nil
    }

    /// How a log names the upload `id`: its first 8 hex digits, enough to tell uploads
    /// apart in a log and to find one's files, never the whole capability.
    static func shortID(_ id: String) -> String {
        String(id.prefix(8))
    }

    /// `text` (an error's description: an object's key, a state's path) with every upload
    /// ID in it — a run of exactly 32 lowercase hex digits — cut to its ``shortID(_:)`` and `…`.
    static func redacting(_ text: String) -> String {
        let isHex = { (byte: UInt8) in (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard isHex(bytes[index]) else {
                out.append(bytes[index])
                index += 1
                continue
            }
            var end = index
            while end < bytes.count, isHex(bytes[end]) { end += 1 }
            out += end - index == 32 ? Array(bytes[index..<(index + 8)]) + Array("…".utf8) : Array(bytes[index..<end])
            index = end
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension ReceiverRequest {
    /// The path as logs write it: each segment that is an upload's ID cut to its
    /// ``RequestLogLine/shortID(_:)`` and `…`.
    var loggedPath: String {
        guard path.utf8.count >= 32 else { return path }
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { UploadStore.isValidID($0) ? RequestLogLine.shortID(String($0)) + "…" : String($0) }
            .joined(separator: "/")
    }
}
