import Foundation
import Hummingbird
import Logging
import Multipart
import NIOCore

/// Receives `POST` `multipart/form-data` on any path, streaming each file part to disk
/// with its SHA-256, and answers a JSON ``Receipt``. Errors answer JSON `{"error": …}`:
/// 413 for a crossed limit, 400 for a malformed body, 415 for another content type,
/// 405 for another method. A failed or aborted request leaves no file behind.
public struct UploadReceiver: Sendable {
    /// What the receiver accepts and where it stores files.
    public let configuration: ReceiverConfiguration
    let logger: Logger

    /// Creates a receiver; the directory is created if missing.
    public init(configuration: ReceiverConfiguration, logger: Logger = Logger(label: "formpost.serve")) throws {
        try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
        self.configuration = configuration
        self.logger = logger
    }

    /// Answers one request.
    @Sendable public func respond(to request: Request, context: some RequestContext) async -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let response: Response
        var received: Receipt?
        do {
            let receipt = try await receive(request)
            received = receipt
            response = Self.json(receipt, status: .ok)
        } catch {
            response = Self.errorResponse(for: error)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let bytes = received?.files.reduce(Int64(0)) { $0 + $1.size } ?? 0
        logger.info("\(request.method) \(request.uri.path) \(response.status.code) files=\(received?.files.count ?? 0) fields=\(received?.fields.count ?? 0) file_bytes=\(bytes) seconds=\(String(format: "%.3f", seconds))")
        return response
    }

    private func receive(_ request: Request) async throws -> Receipt {
        guard request.method == .post else { throw ReceiverFailure.methodNotAllowed("\(request.method) is not allowed: send POST") }
        let contentType = request.headers[.contentType] ?? ""
        guard contentType.lowercased().hasPrefix("multipart/form-data") else {
            throw ReceiverFailure.unsupportedMediaType("the content type must be multipart/form-data, not \"\(contentType)\"")
        }
        if let length = request.headers[.contentLength].flatMap(Int64.init), length > configuration.maxBodySize {
            throw MultipartError.limitExceeded(limit: "maxBodySize", value: configuration.maxBodySize)
        }
        var parser = try MultipartParser(contentType: contentType, limits: configuration.parserLimits)
        var writer = FormWriter(configuration: configuration)
        do {
            for try await buffer in request.body {
                parser.append(Array(buffer.readableBytesView))
                while let event = try parser.next() { try writer.handle(event) }
            }
            try parser.finish()
            return writer.result
        } catch {
            writer.discardAll()
            throw error
        }
    }

    static func errorResponse(for error: any Error) -> Response {
        switch error {
        case MultipartError.limitExceeded(let limit, let value):
            let name = limit == "maxTotalBytes" ? "maxBodySize" : limit == "maxPartBytes" ? "maxFileSize" : limit
            return json(ErrorBody(error: "The upload exceeds the limit \(name) (\(value) bytes or parts)."), status: .contentTooLarge)
        case let error as MultipartError:
            return json(ErrorBody(error: error.description), status: .badRequest)
        case ReceiverFailure.methodNotAllowed(let message):
            var response = json(ErrorBody(error: message), status: .methodNotAllowed)
            response.headers[.allow] = "POST"
            return response
        case ReceiverFailure.unsupportedMediaType(let message):
            return json(ErrorBody(error: message), status: .unsupportedMediaType)
        case ReceiverFailure.storage(let message):
            return json(ErrorBody(error: message), status: .internalServerError)
        default:
            return json(ErrorBody(error: "The upload failed: \(error)"), status: .badRequest)
        }
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
