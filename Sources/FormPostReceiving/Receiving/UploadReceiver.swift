#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
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
        fileStore = configuration.objectStorage.map { ObjectFileStore(store: $0, maxFileSize: configuration.maxFileSize, memory: configuration.partMemory) }
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
    public func respond(to request: ReceiverRequest) async -> ReceiverResponse {
        let line = RequestLogLine()
        let request = line.counting(request)
        let isForm = request.method == .post
        if isForm { ReceiverMetrics.form(began: true) }
        defer { if isForm { ReceiverMetrics.form(began: false) } }
        let response: ReceiverResponse
        var received: Receipt?
        var bodyFinished = false
        do {
            let (receipt, bodyLeft) = try await receive(request, bodyFinished: &bodyFinished)
            received = receipt
            response = Self.json(receipt, status: .ok, endsExchange: bodyLeft)
        } catch {
            response = Self.errorResponse(for: error, endsExchange: !bodyFinished && request.declaresBody)
            switch error {
            case ReceiverFailure.storage(let detail), ReceiverFailure.insufficientStorage(let detail), ReceiverFailure.unavailable(let detail):
                logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(detail)"))")
            case let failure as ObjectStorageError:
                logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(failure)"))")
            default:
                break
            }
            if Self.isUnexpected(error) { FailureLog.log(error, of: request, to: logger) }
        }
        if request.method == .post { ReceiverMetrics.upload(.multipart, received == nil ? .failed : .completed) }
        let bytes = received?.files.reduce(Int64(0)) { $0 + $1.size } ?? 0
        line.log(request, answered: response,
                 details: ["files": .stringConvertible(received?.files.count ?? 0), "fields": .stringConvertible(received?.fields.count ?? 0),
                           "file_bytes": .stringConvertible(bytes)],
                 to: logger)
        return response
    }

    /// Reads the form; returns its receipt, and whether the client may still be sending
    /// (bytes after the closing delimiter, which are not read). `bodyFinished` tells, also
    /// when it throws, whether the body was read to its end.
    private func receive(_ request: ReceiverRequest, bodyFinished: inout Bool) async throws -> (Receipt, bodyLeft: Bool) {
        guard request.method == .post else { throw ReceiverFailure.methodNotAllowed("\(request.method) is not allowed: send POST") }
        var record: (@Sendable (Receipt) async throws -> Void)?
        if let outbox = configuration.events {
            let method = request.method.rawValue, path = request.path
            let client = request.clientAddress?.ipAddress, metadata = request.grantedMetadata
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

    /// The answer to a request that failed with `error`; one that `endsExchange` (see
    /// ``ReceiverResponse/endsExchange``) when the client may still be sending.
    static func errorResponse(for error: any Error, endsExchange: Bool = false) -> ReceiverResponse {
        let (message, status) = errorAnswer(for: error)
        var response = json(ErrorBody(error: message), status: status, endsExchange: endsExchange)
        if status == .methodNotAllowed { response.headers[.allow] = "POST" }
        if case ReceiverFailure.unavailable = error { response.headers[.retryAfter] = String(UploadEventOutbox.retryAfterSeconds) }
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
        case ReceiverFailure.unavailable:
            return ("The upload cannot be taken now: the server is still delivering earlier uploads' events. Try again later.", .serviceUnavailable)
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

    /// `value` as the JSON of an answer: keys sorted, slashes as they are.
    package static func encodeJSON(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// `value` as a JSON answer; one that `endsExchange` (see ``ReceiverResponse/endsExchange``)
    /// when the client may still be sending.
    static func json(_ value: some Encodable, status: HTTPResponse.Status, endsExchange: Bool = false) -> ReceiverResponse {
        ReceiverResponse(status: status, headers: [.contentType: "application/json"], body: ByteBuffer(bytes: encodeJSON(value)), endsExchange: endsExchange)
    }
}
