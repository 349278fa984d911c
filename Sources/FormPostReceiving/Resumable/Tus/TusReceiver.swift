#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Multipart
import NIOCore
import NIOPosix
import ResumableHTTP

/// Receives resumable uploads with tus 1.0 (core protocol, creation, termination,
/// expiration, checksum) under ``basePath``: `POST` creates an upload, `HEAD` tells its
/// offset, `PATCH` appends at that offset, `DELETE` ends it, `OPTIONS` says what the server
/// supports, and `GET` on an upload answers its state and, once complete, the stored file
/// as in a `Receipt`. A `POST` with `X-HTTP-Method-Override` is taken for the method it names.
///
/// Every byte written to the upload's file counts, also from a request that was cut: a
/// client asks for the offset and goes on from there — unless the append carries an
/// `Upload-Checksum` (SHA-1 or SHA-256): then nothing of it counts unless all of it
/// arrived and matches (460 otherwise), also when the server is killed meanwhile. After a
/// write fails (a full disk), nothing more of the request is written: the offset is where
/// the bytes written in order end. State lives in files, so uploads
/// survive a restart of the server, or its being killed, and a power loss: an offset or
/// a receipt is answered only once what it names is synced to the disk. Two appends to one upload never interleave (the second answers 423). An
/// upload is removed once inactive for ``expiry`` (no byte received, no state saved), complete or not; until then `HEAD` on a
/// complete one answers its full length, so a client whose last answer was lost learns
/// that it is done. Completing an upload is crash-safe: its stored name and SHA-256 are
/// saved first, its data is then hard-linked into the directory, and removed only once the
/// state says complete — a server killed (or a step failing) anywhere leaves the upload
/// complete, or at its full offset with its completion recorded, which the next `HEAD` or
/// append finishes under the recorded name (one stored file, the same receipt). `HEAD`
/// never answers 0 while a completion runs. A full offset means stored, or stored soon: a
/// completion that failed is taken up again — by the next request, at start, and by each
/// sweep — until it succeeds.
///
/// At most `maxUploadsInProgress` uploads are in progress at once, and at most
/// `maxUploadsInProgressPerClient` created from one client address (`ClientAddress`: the
/// connection's peer, or the client a trusted proxy forwarded: `UploadServer/trustedProxies`); past
/// either, creation answers 503 with `Retry-After`. An upload in progress that has received no byte
/// for `idleUploadExpiry` is removed (404 from then on): one created and left empty, or
/// fed a byte now and then, does not hold its place for a day. The states of complete uploads are kept, at
/// most `maxUploadsInProgress` (`UploadAdmission`).
///
/// With ``ReceiverConfiguration/objectStorage``, uploads are kept in the bucket instead, so
/// that every receiver on it can continue every upload: each a multipart upload of its
/// object, its state and tail beside it, and a lease (423 while another receiver holds it)
/// around every request that changes it (see "Storing files in object storage"). The
/// limits of uploads in progress count there the uploads this receiver created (their
/// states read again from the bucket before one is refused), and expired uploads are
/// removed when asked for.
public struct TusReceiver: Sendable {
    /// The path uploads are created at; each lives at `basePath/ID`.
    public let basePath: String
    /// The largest upload, in bytes (`Tus-Max-Size`); larger ones answer 413.
    public let maxSize: Int64
    /// The most uploads in progress at once; past it, creation answers 503.
    public let maxUploadsInProgress: Int
    /// The most uploads in progress at once from one client address; past it, that
    /// address's creations answer 503.
    public let maxUploadsInProgressPerClient: Int
    /// How long an upload is kept after it began.
    public let expiry: Duration
    private(set) var store: UploadStore
    let locks = UploadLocks()
    let digests = RunningDigests()
    let unverified = UnverifiedAppends()
    let retries = CompletionRetries()
    /// Where uploads are kept when the configuration names object storage, else nil (the disk).
    let objects: ObjectUploadStore<TusUploadInfo>?
    /// The sweep of the uploads kept in object storage, if they are.
    let objectSweep: ObjectUploadSweep<TusUploadInfo>?
    let logger: Logger
    let lifetime: UploadExpiry
    let admission: UploadAdmission
    let threadPool: NIOThreadPool

    /// What happens between the steps of storing a complete upload: nil, but in tests (and
    /// `formpost serve --kill-at-completion-step`).
    package var completionFault: CompletionFault? {
        get { store.completionFault }
        set { store.completionFault = newValue }
    }

    /// The protocol version spoken.
    public static let version = "1.0.0"
    /// The extensions supported, on the disk and on object storage alike.
    public static let extensions = "creation,creation-with-upload,creation-defer-length,termination,expiration,checksum,concatenation,concatenation-unfinished"
    /// The checksum algorithms verified.
    public static let checksumAlgorithms = "sha1,sha256"

    /// A receiver storing completed files in `configuration.directory` (uploads in progress
    /// under `configuration.stateDirectory`, or `.tus/` of the directory), at most `configuration.maxFileSize` each, at most
    /// `configuration.maxUploadsInProgress` in progress (`maxUploadsInProgressPerClient`
    /// from one client address); uploads older than `expiry`, and those that received no
    /// byte `configuration.idleUploadExpiry` after they began, are removed now and by a
    /// sweep in the background (every 10 s, or half the idle expiry when shorter).
    ///
    /// - Throws: ``ReceiverSetupError/invalidBasePath(_:)`` for a base path that is not below
    ///   `/`; ``ReceiverSetupError/stateDirectoryOnAnotherFileSystem(_:)`` and
    ///   ``ReceiverSetupError/resumableStorageUnusable(_:reason:)`` when the link a
    ///   completion makes, tried at start, fails (or uploads kept in the hidden directory
    ///   cannot be moved); file-system errors when a directory cannot be made.
    public init(configuration: ReceiverConfiguration, basePath: String = "/files", expiry: Duration = .seconds(86_400),
                logger: Logger = Logger(label: "formpost.tus")) throws {
        try self.init(configuration: configuration, basePath: basePath, expiry: expiry, logger: logger, completionFault: nil)
    }

    /// A receiver whose completions strike `completionFault` from the start: those it
    /// tries at start and in its background sweep too (``completionFault`` set later
    /// reaches a request's completions only). For tests.
    package init(configuration: ReceiverConfiguration, basePath: String = "/files", expiry: Duration = .seconds(86_400),
                 logger: Logger = Logger(label: "formpost.tus"), completionFault: CompletionFault?) throws {
        try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
        self.basePath = try ReceiverSetupError.checked(basePath)
        self.maxSize = configuration.maxFileSize
        self.maxUploadsInProgress = configuration.maxUploadsInProgress
        self.maxUploadsInProgressPerClient = configuration.maxUploadsInProgressPerClient
        self.expiry = expiry
        objects = ObjectUploadStore<TusUploadInfo>(configuration: configuration, name: "tus")
        var store = try UploadStore(directory: configuration.directory, stateRoot: configuration.stateDirectory, name: "tus",
                                    fileMode: configuration.storedFileMode, events: try ReceiverSetupError.directoryOutbox(of: configuration))
        store.completionFault = completionFault
        self.store = store
        self.logger = logger
        objectSweep = objects.map { [checked = self.basePath] in ObjectUploadSweep(store: $0, expiry: expiry, basePath: checked, logger: logger) }
        self.lifetime = UploadExpiry(lifetime: expiry, idle: configuration.idleUploadExpiry, retries: retries, kind: .tus)
        self.admission = UploadAdmission(configuration: configuration)
        self.threadPool = .singleton
        // Uploads whose every byte is acknowledged are noted first: the sweep keeps them.
        let directory = self.directory
        directory.findFullUploads()
        removeExpired()
        directory.completeFull(lifetime: lifetime)
        lifetime.startSweeping(store, locks: locks, digests: digests, logger: logger, threadPool: threadPool) { expiry in
            directory.completeFull(lifetime: expiry)
        }
    }

    /// Where uploads are kept: object storage when the configuration names it, else the
    /// directory. Every request on an upload goes through it.
    var storage: any UploadJoining {
        guard let objects else { return directory }
        return directory.bucket(objects, expiry: expiry)
    }

    /// The uploads kept in the directory.
    var directory: DirectoryUploads<TusUploadInfo> {
        DirectoryUploads(store: store, locks: locks, digests: digests, unverified: unverified, retries: retries, lifetime: lifetime,
                         admission: admission, threadPool: threadPool, basePath: basePath, logger: logger)
    }

    /// Whether `path` is this receiver's: ``basePath`` or any path under it (one that
    /// names no upload is answered 404).
    public func handles(_ path: String) -> Bool {
        UploadResourcePath(path, basePath: basePath) != .outside
    }

    /// Sets `formpost_uploads_in_progress{protocol="tus"}` to the uploads kept
    /// unfinished (``ReceiverMetrics``): when the metrics are scraped.
    func reportInProgress() {
        ReceiverMetrics.inProgress(.tus, store.census.all.values.filter { !$0.complete }.count)
    }

    /// Answers one request under ``basePath``.
    public func respond(to request: ReceiverRequest) async -> ReceiverResponse {
        let line = RequestLogLine()
        let request = line.counting(request)
        var response: ReceiverResponse
        do {
            response = try await route(request, client: ClientAddress.key(request.clientAddress), granted: request.grantedMetadata)
        } catch let created as TusCreatedUploadFailure {
            response = failureResponse(created.failure, of: request)
            response.headers[.location] = created.location
        } catch {
            response = failureResponse(error, of: request)
        }
        response.headers[.tusResumable] = Self.version
        line.log(request, answered: response,
                 upload: RequestLogLine.upload(of: request, answered: response, basePath: basePath), to: logger)
        return response
    }

    /// The answer to `request` when answering it threw `error` (logged here when it is the
    /// server's, not the client's).
    func failureResponse(_ error: any Error, of request: ReceiverRequest) -> ReceiverResponse {
        var response: ReceiverResponse
        switch error {
        case let failure as TusFailure:
            response = Self.answer(failure.status, message: failure.message)
            if failure.status == .serviceUnavailable { response.headers[.retryAfter] = String(failure.retryAfter) }
        case let failure as UploadStorageFailure:
            response = Self.answer(failure.status, message: failure.message)
        case ReceiverFailure.unavailable(let detail):
            logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(detail)"))")
            let (message, status) = UploadReceiver.errorAnswer(for: ReceiverFailure.unavailable(detail))
            response = Self.answer(status, message: message)
            response.headers[.retryAfter] = String(UploadEventOutbox.retryAfterSeconds)
        case ReceiverFailure.insufficientStorage(let detail):
            logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(detail)"))")
            response = Self.answer(.init(code: 507, reasonPhrase: "Insufficient Storage"), message: "The server has no room left to store the upload.")
        case let failure as ObjectStorageError:
            // The store failing or busy (after the retries each request gets): the client
            // asks again later; a refusal (credentials, permissions) is the operator's to mend.
            logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(failure)"))")
            response = failure.isTransient
                ? Self.answer(.serviceUnavailable, message: "The object store is unavailable: try again later.")
                : Self.answer(.internalServerError, message: "The upload could not be stored.")
            if failure.isTransient { response.headers[.retryAfter] = "5" }
        default:
            FailureLog.log(error, of: request, to: logger)
            response = Self.answer(.internalServerError, message: "The upload could not be stored.")
        }
        return response
    }

    func route(_ request: ReceiverRequest, client: String?, granted: [String: String]?) async throws -> ReceiverResponse {
        let target = UploadResourcePath(request.path, basePath: basePath)
        // A path that names no upload is none, whatever the method and fields.
        if target == .unknown || target == .outside { throw TusFailure(.notFound, "no such upload") }
        let method = try Self.method(of: request)
        if method == .options {
            return ReceiverResponse(status: .noContent, headers: [
                .tusVersion: Self.version, .tusExtension: Self.extensions,
                .tusMaxSize: String(maxSize), .tusChecksumAlgorithm: Self.checksumAlgorithms,
            ])
        }
        guard request.headers[.tusResumable] == Self.version else {
            var response = Self.answer(.preconditionFailed, message: "send Tus-Resumable: \(Self.version)")
            response.headers[.tusVersion] = Self.version
            return response
        }
        let id: String
        switch target {
        case .collection:
            guard method == .post else { throw TusFailure(.methodNotAllowed, "create an upload with POST \(basePath)") }
            return try await create(request, client: client, granted: granted)
        case .upload(let named):
            id = named
        case .unknown, .outside:
            throw TusFailure(.notFound, "no such upload")
        }
        let uploads = storage
        switch method {
        case .head: return try await head(id, in: uploads)
        case .get: return try await state(id, in: uploads)
        case .patch: return try await append(request, id: id, in: uploads)
        case .delete: return try await delete(id, in: uploads)
        default: throw TusFailure(.methodNotAllowed, "an upload answers HEAD, GET, PATCH and DELETE")
        }
    }

    /// Removes uploads older than ``expiry`` (a completed one's file stays), and idle ones
    /// (``UploadExpiry``). It blocks on the file system: at start.
    func removeExpired() {
        lifetime.sweep(store, locks: locks, digests: digests, logger: logger)
    }

    /// The method `request` asks for: for a `POST`, the one its `X-HTTP-Method-Override`
    /// names, if any (tus 1.0, for clients that can send GET and POST only).
    ///
    /// - Throws: ``TusFailure`` 400 when the override is no method.
    static func method(of request: ReceiverRequest) throws -> HTTPRequest.Method {
        guard request.method == .post, let override = request.headers[methodOverride] else { return request.method }
        guard let method = HTTPRequest.Method(override.trimmingOptionalWhitespace()) else {
            throw TusFailure(.badRequest, "X-HTTP-Method-Override is not a method")
        }
        return method
    }

    /// `X-HTTP-Method-Override`.
    static let methodOverride = HTTPField.Name("X-HTTP-Method-Override")!

    /// Whether `metadata` is a list of keys, each with a base64 value or none, no key twice.
    static func isValidMetadata(_ metadata: String) -> Bool {
        guard let values = TusMetadata.parse(metadata) else { return false }
        return values.count == metadata.split(separator: ",").count
    }

    static func answer(_ status: HTTPResponse.Status, message: String) -> ReceiverResponse {
        UploadReceiver.json(ErrorBody(error: message), status: status)
    }
}
