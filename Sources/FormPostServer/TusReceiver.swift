#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Multipart
import NIOCore
import NIOPosix

/// Receives resumable uploads with tus 1.0 (core protocol, creation, termination,
/// expiration) under ``basePath``: `POST` creates an upload, `HEAD` tells its offset,
/// `PATCH` appends at that offset, `DELETE` ends it, `OPTIONS` says what the server
/// supports, and `GET` on an upload answers its state and, once complete, the stored file
/// as in a ``Receipt``.
///
/// Every byte written to the upload's file counts, also from a request that was cut: a
/// client asks for the offset and goes on from there. State lives in files, so uploads
/// survive a restart of the server, or its being killed; as with multipart uploads,
/// nothing is forced to the disk (`fsync`), so a crash of the machine itself may lose
/// what the page cache held. Two appends to one upload never interleave (the second answers 423). An
/// upload is removed ``expiry`` after it began, complete or not; until then `HEAD` on a
/// complete one answers its full length, so a client whose last answer was lost learns
/// that it is done.
public struct TusReceiver: Sendable {
    /// The path uploads are created at; each lives at `basePath/ID`.
    public let basePath: String
    /// The largest upload, in bytes (`Tus-Max-Size`); larger ones answer 413.
    public let maxSize: Int64
    /// How long an upload is kept after it began.
    public let expiry: Duration
    let store: TusStore
    let locks = TusLocks()
    let digests = TusDigests()
    let logger: Logger
    private let threadPool: NIOThreadPool

    /// The protocol version spoken.
    public static let version = "1.0.0"
    /// The extensions supported.
    public static let extensions = "creation,termination,expiration"

    /// A receiver storing completed files in `configuration.directory` (uploads in progress
    /// under its `.tus/`), at most `configuration.maxFileSize` each; uploads older than
    /// `expiry` are removed now and whenever an upload is created.
    public init(configuration: ReceiverConfiguration, basePath: String = "/files", expiry: Duration = .seconds(86_400),
                logger: Logger = Logger(label: "formpost.tus")) throws {
        try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
        self.basePath = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
        self.maxSize = configuration.maxFileSize
        self.expiry = expiry
        self.store = try TusStore(directory: configuration.directory, fileMode: configuration.storedFileMode)
        self.logger = logger
        self.threadPool = .singleton
        removeExpired()
    }

    /// Whether `path` is this receiver's (``basePath`` or an upload under it).
    public func handles(_ path: String) -> Bool {
        path == basePath || path == basePath + "/" || path.hasPrefix(basePath + "/")
    }

    /// Answers one request under ``basePath``.
    @Sendable public func respond(to request: Request, context: some RequestContext) async -> Response {
        var response: Response
        do {
            response = try await route(request)
        } catch let failure as TusFailure {
            response = Self.answer(failure.status, message: failure.message)
        } catch ReceiverFailure.insufficientStorage(let detail) {
            logger.error("\(request.method) \(request.uri.path): \(detail)")
            response = Self.answer(.init(code: 507, reasonPhrase: "Insufficient Storage"), message: "The server has no room left to store the upload.")
        } catch {
            logger.error("\(request.method) \(request.uri.path) failed: \(String(reflecting: error))")
            response = Self.answer(.internalServerError, message: "The upload could not be stored.")
        }
        response.headers[.tusResumable] = Self.version
        logger.info("\(request.method) \(request.uri.path) \(response.status.code)")
        return response
    }

    private func route(_ request: Request) async throws -> Response {
        if request.method == .options {
            return Response(status: .noContent, headers: [
                .tusVersion: Self.version, .tusExtension: Self.extensions,
                .tusMaxSize: String(maxSize),
            ])
        }
        guard request.headers[.tusResumable] == Self.version else {
            var response = Self.answer(.preconditionFailed, message: "send Tus-Resumable: \(Self.version)")
            response.headers[.tusVersion] = Self.version
            return response
        }
        let rest = request.uri.path.dropFirst(basePath.count).drop { $0 == "/" }
        if rest.isEmpty {
            guard request.method == .post else { throw TusFailure(.methodNotAllowed, "create an upload with POST \(basePath)") }
            return try await create(request)
        }
        guard TusStore.isValidID(rest) else { throw TusFailure(.notFound, "no such upload") }
        let id = String(rest)
        switch request.method {
        case .head: return try await head(id)
        case .get: return try await state(id)
        case .patch: return try await append(request, id: id)
        case .delete: return try await delete(id)
        default: throw TusFailure(.methodNotAllowed, "an upload answers HEAD, GET, PATCH and DELETE")
        }
    }

    // MARK: - Requests

    private func create(_ request: Request) async throws -> Response {
        guard let lengthText = request.headers[.uploadLength], let length = Int64(lengthText), length >= 0 else {
            throw TusFailure(.badRequest, "Upload-Length is missing or not a size (deferred lengths are not supported)")
        }
        guard length <= maxSize else { throw TusFailure(.contentTooLarge, "the upload exceeds the limit of \(maxSize) bytes") }
        let metadata = request.headers[.uploadMetadata]
        if let metadata, TusMetadata.parse(metadata) == nil { throw TusFailure(.badRequest, "Upload-Metadata is not a list of keys and base64 values") }
        let info = TusUploadInfo(length: length, metadata: metadata, created: Date().timeIntervalSince1970)
        let store = self.store
        let receiver = self
        let id = try await threadPool.runIfActive {
            receiver.removeExpired()
            return try store.create(info)
        }
        if length == 0 {
            _ = try await threadPool.runIfActive { try store.complete(id, info: info, sha256: nil) }
        }
        return Response(status: .created, headers: [.location: basePath + "/" + id, .uploadExpires: expires(info)])
    }

    private func head(_ id: String) async throws -> Response {
        let (info, offset) = try await current(id)
        var headers: HTTPFields = [
            .uploadOffset: String(offset), .uploadLength: String(info.length),
            .cacheControl: "no-store", .uploadExpires: expires(info),
        ]
        if let metadata = info.metadata { headers[.uploadMetadata] = metadata }
        return Response(status: .ok, headers: headers)
    }

    private func state(_ id: String) async throws -> Response {
        let (info, offset) = try await current(id)
        let state = TusUploadState(length: info.length, offset: offset, complete: info.file != nil,
                                   receipt: info.file.map { Receipt(fields: [], files: [$0]) })
        var response = UploadReceiver.json(state, status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func delete(_ id: String) async throws -> Response {
        _ = try await current(id)
        guard locks.acquire(id) else { throw TusFailure(.locked, "the upload is being appended to") }
        defer { locks.release(id) }
        let store = self.store
        try await threadPool.runIfActive { store.remove(id, storedFile: true) }
        digests.remove(id)
        return Response(status: .noContent)
    }

    /// Appends the request's body at the upload's offset; bytes that reached the disk stay
    /// when the request is cut.
    private func append(_ request: Request, id: String) async throws -> Response {
        guard request.headers[.contentType]?.lowercased() == "application/offset+octet-stream" else {
            throw TusFailure(.unsupportedMediaType, "an append's Content-Type is application/offset+octet-stream")
        }
        guard let offsetText = request.headers[.uploadOffset], let claimed = Int64(offsetText) else {
            throw TusFailure(.badRequest, "Upload-Offset is missing")
        }
        guard locks.acquire(id) else { throw TusFailure(.locked, "another request is appending to this upload") }
        defer { locks.release(id) }
        let (info, offset) = try await current(id)
        guard claimed == offset else { throw TusFailure(.conflict, "the upload's offset is \(offset), not \(claimed)") }
        if let declared = request.headers[.contentLength].flatMap(Int64.init), offset + declared > info.length {
            throw TusFailure(.contentTooLarge, "\(declared) bytes at offset \(offset) exceed Upload-Length \(info.length)")
        }
        let store = self.store
        guard offset < info.length else { return appended(info.length, info: info) }
        let descriptor = try await threadPool.runIfActive { try store.openForAppend(id) }
        var written = offset
        var hasher = digests.take(id, at: offset)
        var writer = BatchedFileWriter(descriptor: descriptor, threadPool: threadPool)
        var tooLong = false
        do {
            do {
                for try await var buffer in request.body {
                    let room = Int(info.length - written)
                    if buffer.readableBytes > room {
                        tooLong = true
                        buffer = buffer.getSlice(at: buffer.readerIndex, length: room) ?? ByteBuffer()
                    }
                    written += Int64(buffer.readableBytes)
                    buffer.withUnsafeReadableBytes { hasher?.update(bufferPointer: $0) }
                    try await writer.write(buffer)
                    if tooLong { break }
                }
            } catch let error as ReceiverFailure {
                throw error
            } catch {
                // The client went away: what it sent is kept, and counts.
                logger.notice("PATCH \(request.uri.path) cut at \(written) bytes: \(error)")
            }
            try await writer.flush()
        } catch {
            try? await threadPool.runIfActive { _ = close(descriptor) }
            throw error
        }
        try await threadPool.runIfActive { _ = close(descriptor) }
        if tooLong { throw TusFailure(.contentTooLarge, "the append goes past Upload-Length \(info.length)") }
        guard written == info.length else {
            if let hasher { digests.put(id, hasher, offset: written) }
            return appended(written, info: info)
        }
        let digest = hasher.map { $0.finalize().map { String(format: "%02x", $0) }.joined() }
        let done = try await threadPool.runIfActive { try store.complete(id, info: info, sha256: digest) }
        logger.info("upload \(id) complete: \(done.file?.storedAs ?? "") \(info.length) bytes")
        return appended(written, info: info)
    }

    private func appended(_ offset: Int64, info: TusUploadInfo) -> Response {
        Response(status: .noContent, headers: [.uploadOffset: String(offset), .uploadExpires: expires(info)])
    }

    // MARK: - State

    /// The upload `id` and its offset (its length once complete).
    ///
    /// - Throws: ``TusFailure`` 404 for an unknown upload, 410 for an expired one (which is removed).
    private func current(_ id: String) async throws -> (TusUploadInfo, Int64) {
        let store = self.store
        let expiry = self.expiry
        return try await threadPool.runIfActive {
            guard let info = store.load(id) else { throw TusFailure(.notFound, "no such upload") }
            if Date().timeIntervalSince1970 - info.created > Double(expiry.components.seconds) {
                store.remove(id, storedFile: false)
                throw TusFailure(.gone, "the upload expired")
            }
            return (info, info.file == nil ? store.offset(id) : info.length)
        }
    }

    /// Removes uploads older than ``expiry`` (a completed one's file stays). It blocks on
    /// the file system: at start, or on NIO's thread pool.
    private func removeExpired() {
        let limit = Date().timeIntervalSince1970 - Double(expiry.components.seconds)
        for id in store.ids() {
            guard let info = store.load(id), info.created < limit, locks.acquire(id) else { continue }
            store.remove(id, storedFile: false)
            locks.release(id)
            logger.notice("removed upload \(id), begun more than \(expiry) ago")
        }
    }

    /// `Upload-Expires`: when the upload will be removed, as an HTTP date.
    private func expires(_ info: TusUploadInfo) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: info.created + Double(expiry.components.seconds)))
    }

    static func answer(_ status: HTTPResponse.Status, message: String) -> Response {
        UploadReceiver.json(ErrorBody(error: message), status: status)
    }
}

/// A request the tus receiver refuses, with its status.
struct TusFailure: Error {
    let status: HTTPResponse.Status
    let message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// What `GET` on a tus upload answers.
struct TusUploadState: Codable {
    var length: Int64
    var offset: Int64
    var complete: Bool
    var receipt: Receipt?
}
