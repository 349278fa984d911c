#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import Logging
import Multipart
import NIOCore

/// Receives `POST` `multipart/form-data` on any path, streaming each file part to disk
/// with its SHA-256, and answers a JSON `Receipt`. Errors answer JSON `{"error": …}`:
/// 413 for a crossed limit, 400 for a malformed body, 415 for another content type,
/// 405 for another method, 500 (with a generic message; the detail goes to the log) when
/// files cannot be stored. A failed or aborted request leaves no file behind. Reading
/// stops at the closing delimiter: the answer goes out at once, and a connection whose
/// client would send more (an epilogue) is closed after it.
public struct UploadReceiver: Sendable {
    /// What the receiver accepts and where it stores files.
    public let configuration: ReceiverConfiguration
    let logger: Logger
    /// Where the files of forms go: ``ReceiverConfiguration/objectStorage``'s bucket, else
    /// the directory; made once, with the receiver.
    let fileStore: any FormFileStore

    /// How long a partial file must have been left untouched to be taken for the remains
    /// of a crashed server (an upload in progress writes to its file all the time).
    public static let stalePartialAge: Duration = .seconds(60)

    /// Creates a receiver; the directory is created if missing, and partial files a
    /// crashed server left there (untouched for ``stalePartialAge``) are removed.
    public init(configuration: ReceiverConfiguration, logger: Logger = Logger(label: "formpost.serve")) throws {
        try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
        self.configuration = configuration
        self.logger = logger
        fileStore = configuration.objectStorage.map { S3FileStore(storage: $0, maxFileSize: configuration.maxFileSize) }
            ?? DirectoryFileStore(configuration: configuration)
        sweepStalePartialFiles()
    }

    private func sweepStalePartialFiles() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: configuration.directory)) ?? []
        for name in names where name.hasPrefix(FileSink.partialPrefix) {
            let path = configuration.directory + "/" + name
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                  Date().timeIntervalSince(modified) > Double(Self.stalePartialAge.components.seconds) else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil {
                logger.notice("removed \(path), left by an upload that never ended")
            }
        }
    }


    /// Answers one request.
    @Sendable public func respond(to request: Request, context: some RequestContext) async -> Response {
        let line = RequestLogLine()
        let request = line.counting(request)
        let isForm = request.method == .post
        if isForm { ReceiverMetrics.form(began: true) }
        defer { if isForm { ReceiverMetrics.form(began: false) } }
        let response: Response
        var received: Receipt?
        var bodyFinished = false
        do {
            let (receipt, bodyLeft) = try await receive(request, client: ClientAddress.address(of: context)?.ipAddress,
                                                          metadata: UploadGrant.metadata(in: context), bodyFinished: &bodyFinished)
            received = receipt
            response = Self.json(receipt, status: .ok, ending: bodyLeft ? (context as? ReceiverRequestContext)?.channel : nil)
        } catch {
            let channel = (context as? ReceiverRequestContext)?.channel
            let unread = !bodyFinished && channel.map { Self.declaresBody(request, on: $0) } == true
            response = Self.errorResponse(for: error, ending: unread ? channel : nil)
            switch error {
            case ReceiverFailure.storage(let detail), ReceiverFailure.insufficientStorage(let detail):
                logger.error("\(request.method) \(request.uri.path): \(detail)")
            case let failure as ObjectStorageError:
                logger.error("\(request.method) \(request.uri.path): \(failure)")
            default:
                break
            }
            if Self.isUnexpected(error) { FailureLog.log(error, of: request, to: logger) }
        }
        if request.method == .post { ReceiverMetrics.upload(.multipart, received == nil ? .failed : .completed) }
        let bytes = received?.files.reduce(Int64(0)) { $0 + $1.size } ?? 0
        line.log(request, answered: response, client: ClientAddress.logged(context),
                 details: ["files": .stringConvertible(received?.files.count ?? 0), "fields": .stringConvertible(received?.fields.count ?? 0),
                           "file_bytes": .stringConvertible(bytes)],
                 to: logger)
        return response
    }

    /// Whether `request` comes with a body: a positive `Content-Length`, or without one
    /// `Transfer-Encoding` on HTTP/1.1, or a stream of HTTP/2 (whose connection, not the
    /// listening channel, is its channel's parent).
    static func declaresBody(_ request: Request, on channel: any Channel) -> Bool {
        if let length = request.headers[.contentLength].flatMap(Int64.init) { return length > 0 }
        return request.headers[.transferEncoding] != nil || channel.parent?.parent != nil
    }

    /// Reads the form; returns its receipt, and whether the client may still be sending
    /// (bytes after the closing delimiter, which are not read). `bodyFinished` tells, also
    /// when it throws, whether the body was read to its end.
    private func receive(_ request: Request, client: String?, metadata: [String: String]?, bodyFinished: inout Bool) async throws -> (Receipt, bodyLeft: Bool) {
        guard request.method == .post else { throw ReceiverFailure.methodNotAllowed("\(request.method) is not allowed: send POST") }
        var record: (@Sendable (Receipt) async throws -> Void)?
        if let outbox = configuration.events {
            let method = request.method.rawValue, path = request.uri.path
            record = { receipt in
                let upload = UploadEvent.Upload(protocol: .multipart, method: method, path: path, client: client, receipt: receipt, metadata: metadata)
                try await outbox.record(UploadEvent.postFinish, upload: upload)
            }
        }
        return try await receiveForm(contentType: request.headers[.contentType] ?? "", declaredLength: request.headers[.contentLength].flatMap(Int64.init),
                                     body: request.body, bodyFinished: &bodyFinished, beforeAnswer: record)
    }

    /// Reads a form of `contentType` from `body` (of `declaredLength` bytes, when known),
    /// storing its files; returns its receipt, and whether `body` may hold more (bytes
    /// after the closing delimiter, which are not read). `bodyFinished` tells, also when it
    /// throws, whether the body was read to its end. `beforeAnswer` is given the receipt
    /// once the files are safe; when it throws, the form fails. A failed form leaves no file behind.
    func receiveForm<Body: AsyncSequence>(contentType: String, declaredLength: Int64?, body: Body, bodyFinished: inout Bool,
                                          beforeAnswer: (@Sendable (Receipt) async throws -> Void)? = nil) async throws -> (Receipt, bodyLeft: Bool)
        where Body.Element == ByteBuffer {
        guard contentType.lowercased().hasPrefix("multipart/form-data") else {
            throw ReceiverFailure.unsupportedMediaType("the content type must be multipart/form-data, not \"\(contentType)\"")
        }
        if let declaredLength, declaredLength > configuration.maxBodySize {
            throw ReceiverFailure.limitExceeded(.maxBodySize, value: configuration.maxBodySize)
        }
        var parser = ByteBufferMultipartParser(try MultipartParser(contentType: contentType, limits: configuration.parserLimits))
        var writer = FormWriter(configuration: configuration, store: fileStore)
        var read: Int64 = 0
        var stoppedEarly = false
        do {
            for try await buffer in body {
                read += Int64(buffer.readableBytes)
                for event in try parser.parse(buffer) { try await writer.handle(event) }
                if parser.isComplete {
                    stoppedEarly = true
                    break
                }
            }
            bodyFinished = !stoppedEarly
            try parser.finish()
            try await writer.finish()
            try await beforeAnswer?(writer.result)
            return (writer.result, stoppedEarly && (declaredLength.map { read < $0 } ?? true))
        } catch {
            await writer.discardAll()
            throw error
        }
    }

    /// The answer to a request that failed with `error`; with `ending`, the answer ends the
    /// connection as ``json(_:status:ending:)`` says.
    static func errorResponse(for error: any Error, ending channel: (any Channel)? = nil) -> Response {
        let (message, status) = errorAnswer(for: error)
        var response = json(ErrorBody(error: message), status: status, ending: channel)
        if status == .methodNotAllowed { response.headers[.allow] = "POST" }
        return response
    }

    /// What the client is told about `error`, and with which status.
    static func errorAnswer(for error: any Error) -> (String, HTTPResponse.Status) {
        switch error {
        case MultipartError.limitExceeded(let limit, let value):
            return errorAnswer(for: ReceiverFailure.limitExceeded(ReceiverLimit(limit), value: value))
        case ReceiverFailure.limitExceeded(let limit, let value):
            return ("The upload exceeds the limit \(limit.rawValue) (\(value) bytes or parts).", .contentTooLarge)
        case let error as MultipartError:
            return (error.description, .badRequest)
        case ReceiverFailure.methodNotAllowed(let message):
            return (message, .methodNotAllowed)
        case ReceiverFailure.unsupportedMediaType(let message):
            return (message, .unsupportedMediaType)
        case ReceiverFailure.insufficientStorage:
            return ("The server has no room left to store the upload.", .init(code: 507, reasonPhrase: "Insufficient Storage"))
        case ReceiverFailure.storage:
            return ("The upload could not be stored.", .internalServerError)
        case let failure as ObjectStorageError:
            // A store still failing after the retries its requests get: the client may try
            // again later; one that refuses (credentials, permissions) is the server's fault.
            return failure.isTransient ? ("The upload could not be stored now: try again later.", .serviceUnavailable)
                : ("The upload could not be stored.", .internalServerError)
        default:
            return ("The upload failed.", .badRequest)
        }
    }

    /// Whether `error` is one of the receiver's own answers' causes, or something unexpected
    /// whose detail belongs in the log only.
    static func isUnexpected(_ error: any Error) -> Bool {
        !(error is MultipartError || error is ReceiverFailure || error is ObjectStorageError)
    }

    /// How long a connection whose request was answered before its body was read goes on
    /// being read (and what arrives dropped) before it is closed: time for the client to
    /// read the answer and stop sending. Closing at once would make the kernel answer the
    /// bytes still in flight with a reset, which can destroy the answer before the client
    /// reads it (nginx's `lingering_timeout` is 5 s too).
    static let lingeringTime: TimeAmount = .seconds(5)

    /// `value` as the JSON of an answer: keys sorted, slashes as they are.
    static func encodeJSON(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// `value` as a JSON answer. With `ending` (the request's channel), the answer ends the
    /// exchange although the client may still be sending: the connection (on HTTP/2, the
    /// stream) is closed ``lingeringTime`` after the answer was written, or sooner by the
    /// client. (It does not say `Connection: close`: AsyncHTTPClient closes at once on that
    /// while its body is still going, and loses the answer's body; HTTP/2 forbids it.)
    static func json(_ value: some Encodable, status: HTTPResponse.Status, ending channel: (any Channel)? = nil) -> Response {
        let buffer = ByteBuffer(bytes: encodeJSON(value))
        let headers: HTTPFields = [.contentType: "application/json"]
        guard let channel else {
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
        }
        let body = ResponseBody(contentLength: buffer.readableBytes) { writer in
            try await writer.write(buffer)
            try await writer.finish(nil)
            channel.eventLoop.scheduleTask(in: lingeringTime) { channel.close(promise: nil) }
        }
        return Response(status: status, headers: headers, body: body)
    }
}
