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

/// Receives resumable uploads of the IETF draft "Resumable Uploads for HTTP"
/// (interop versions 3 and 5 to 9, each answered in its own terms: Apple's URLSession
/// speaks 3 on iOS 17 and macOS 14, 5 and 6 on iOS 18 and macOS 15), for the targets of an
/// ``UploadReceiver``: a `POST` or `PUT` with `Upload-Complete` creates an upload resource
/// under ``basePath``; `HEAD` tells its offset, `PATCH` (`application/partial-upload`)
/// appends at that offset, `DELETE` cancels it, `OPTIONS` tells the limits.
///
/// When the last byte has arrived, the representation is answered as one request would
/// have been: a `multipart/form-data` body gets the `Receipt` the ``UploadReceiver``
/// answers, with the same limits; any other representation is stored as one file (named
/// by its `Content-Disposition`), with its SHA-256. A form is parsed as its appends arrive,
/// each file part's content written once, to a file of its own, which completion moves
/// into the directory (after a restart, what is stored is parsed once again); a form found
/// malformed or past a limit is answered so at once, for good. That answer carries
/// `Upload-Complete: ?1`, is kept, and is given again to a client whose answer was lost (an
/// empty append at the end, or `GET`). Only a form's own faults (400, 413, 415) answer it
/// for good: after a failure to store it (a full disk), the upload stays, and completing
/// it again may succeed.
///
/// A client that speaks a supported interop version learns the upload resource at once, in
/// a `104` interim response, before its body is read: the request can be cut anywhere.
/// Every byte that reached the disk counts, also from a request that was cut; after a
/// write fails, nothing more of the request is written, and the upload's offset is where
/// the bytes written in order end. A request on
/// an upload that another request still holds (a client resumed while the server had not
/// yet noticed its earlier connection was gone) ends that request, as the draft
/// recommends. State lives in files (under the directory's `.resumable/`): uploads survive a restart.
/// Completion is crash-safe. A representation that is not a form: its stored name and
/// SHA-256 are saved first, its data is then hard-linked into the directory, and removed
/// only once the answer is saved — a server killed (or a step failing) anywhere leaves the
/// upload answered, or at its full offset with its completion recorded, which completing
/// it again finishes under the recorded name (one stored file, the same receipt). A form:
/// its answer is saved with its files' stored names before any of them moves; the next
/// request moves what is left. A completion that failed is also taken up again at start
/// and by each sweep, until it succeeds.
///
/// At most `maxUploadsInProgress` uploads are in progress at once, and at most
/// `maxUploadsInProgressPerClient` created from one client address (`ClientAddress`: the
/// connection's peer, or the client a trusted proxy forwarded: `UploadServer/trustedProxies`); past
/// either, creation answers 503 with `Retry-After`. An upload that has received no byte
/// `idleUploadExpiry` after it began is removed (404 from then on): one created and left
/// empty does not hold its place for a day. The states of complete uploads are kept, at
/// most `maxUploadsInProgress` (`UploadAdmission`).
///
/// With ``ReceiverConfiguration/objectStorage``, uploads are kept in the bucket instead, so
/// that every receiver on it continues every upload (see "Storing files in object
/// storage"): representations that are not forms only (a form is answered 415). There an
/// upload expires `expiry` after its last activity, or its maximum lifetime
/// (``ReceiverConfiguration/resumableMaxLifetime``) after its creation when that comes first
/// (`Upload-Limit`'s `max-age` still counts `expiry` from its creation, never past that
/// maximum), the idle expiry is not counted, the limits of uploads in progress count the
/// uploads this receiver created (their states read again from the bucket before one is
/// refused), and a sweep (`ObjectStorage/sweepInterval`) takes up completions and removes
/// expired uploads.
public struct ResumableUploadReceiver: Sendable {
    /// Where upload resources live: `basePath/ID`.
    public let basePath: String
    /// How long an upload is kept after it began.
    public let expiry: Duration
    let receiver: UploadReceiver
    private(set) var store: UploadStore
    let locks = UploadLocks()
    let digests = RunningDigests()
    let unverified = UnverifiedAppends()
    /// The parses of forms in progress, kept between their appends.
    let formProgresses = FormProgresses()
    let retries = CompletionRetries()
    /// Where uploads are kept when the configuration names object storage, else nil (the disk).
    let objects: ObjectUploadStore<DraftUploadInfo>?
    /// The sweep of the uploads kept in object storage, if they are.
    let objectSweep: ObjectUploadSweep<DraftUploadInfo>?
    let logger: Logger
    let lifetime: UploadExpiry
    let admission: UploadAdmission
    let threadPool: NIOThreadPool

    /// The receiver's resumable forms, stored as ``store`` says.
    var forms: ResumableForms {
        ResumableForms(store: store, configuration: receiver.configuration, threadPool: threadPool, progresses: formProgresses)
    }

    /// The most parses of forms in progress kept in memory between their appends (64
    /// unless set); one not kept is made again from what is stored.
    package var formProgressCapacity: Int {
        get { formProgresses.capacity }
        nonmutating set { formProgresses.capacity = newValue }
    }

    /// What happens between the steps of storing a representation that is not a form: nil,
    /// but in tests (and `formpost serve --kill-at-completion-step`).
    package var completionFault: CompletionFault? {
        get { store.completionFault }
        set { store.completionFault = newValue }
    }

    /// A receiver of resumable uploads for the targets of `receiver` (its configuration:
    /// directory, limits, permissions, uploads in progress at once and per client
    /// address); uploads older than `expiry`, and those that received no byte
    /// `idleUploadExpiry` after they began, are removed now and by a sweep in the
    /// background (every 10 s, or half the idle expiry when shorter).
    ///
    /// - Throws: ``ReceiverSetupError/invalidBasePath(_:)`` for a base path that is not below
    ///   `/`; ``ReceiverSetupError/stateDirectoryOnAnotherFileSystem(_:)`` and
    ///   ``ReceiverSetupError/resumableStorageUnusable(_:reason:)`` when the link a
    ///   completion makes, tried at start, fails (or uploads kept in the hidden directory
    ///   cannot be moved); file-system errors when a directory cannot be made.
    public init(receiver: UploadReceiver, basePath: String = "/uploads", expiry: Duration = .seconds(86_400),
                logger: Logger = Logger(label: "formpost.resumable")) throws {
        try self.init(receiver: receiver, basePath: basePath, expiry: expiry, logger: logger, completionFault: nil)
    }

    /// A receiver whose completions strike `completionFault` from the start: those it
    /// tries at start and in its background sweep too (``completionFault`` set later
    /// reaches a request's completions only). For tests.
    package init(receiver: UploadReceiver, basePath: String = "/uploads", expiry: Duration = .seconds(86_400),
                 logger: Logger = Logger(label: "formpost.resumable"), completionFault: CompletionFault?) throws {
        self.receiver = receiver
        self.basePath = try ReceiverSetupError.checked(basePath)
        self.expiry = expiry
        var store = try UploadStore(directory: receiver.configuration.directory, stateRoot: receiver.configuration.stateDirectory,
                                    name: "resumable", fileMode: receiver.configuration.storedFileMode,
                                    events: try ReceiverSetupError.directoryOutbox(of: receiver.configuration))
        store.completionFault = completionFault
        self.store = store
        let configuration = receiver.configuration
        objects = ObjectUploadStore<DraftUploadInfo>(configuration: configuration, name: "resumable")
        self.logger = logger
        objectSweep = objects.map { [checked = self.basePath] in ObjectUploadSweep(store: $0, expiry: expiry, basePath: checked, logger: logger) }
        self.lifetime = UploadExpiry(lifetime: expiry, idle: receiver.configuration.idleUploadExpiry, progresses: formProgresses, retries: retries,
                                     kind: .ietf)
        self.admission = UploadAdmission(configuration: receiver.configuration)
        self.threadPool = .singleton
        // Uploads whose every byte is acknowledged are noted first: the sweep keeps them.
        findUnfinishedCompletions()
        removeExpired()
        let basePath = self.basePath
        Self.completeFull(retries, in: store, locks: locks, lifetime: lifetime, logger: logger, basePath: basePath)
        lifetime.startSweeping(store, locks: locks, digests: digests, logger: logger, threadPool: threadPool) { [store, locks, retries, logger] expiry in
            Self.completeFull(retries, in: store, locks: locks, lifetime: expiry, logger: logger, basePath: basePath)
        }
    }

    /// Where uploads are kept: object storage when the configuration names it, else the
    /// directory. Every request on an upload goes through it.
    var storage: any UploadStorage<DraftUploadInfo> { directory.or(objects, expiry: expiry) }

    /// The uploads kept in the directory.
    var directory: DirectoryUploads<DraftUploadInfo> {
        DirectoryUploads(store: store, locks: locks, digests: digests, unverified: unverified, retries: retries, lifetime: lifetime,
                         admission: admission, threadPool: threadPool, basePath: basePath, logger: logger)
    }

    /// Whether `request` is this receiver's: on an upload resource, an `OPTIONS`, or a
    /// request that asks for a resumable upload (`Upload-Complete`, or `Upload-Incomplete`
    /// of interop version 3).
    public func handles(_ request: ReceiverRequest) -> Bool {
        UploadResourcePath(request.path, basePath: basePath) != .outside || request.method == .options
            || DraftInterop.asksForResumableUpload(request.headers)
    }

    /// Whether it takes resumable `multipart/form-data` forms: on the disk, yes; with object
    /// storage, no (415: each file goes as a resumable upload of its own, or the form in
    /// one request), and the upload page sends its forms in one request.
    public var takesForms: Bool { objects == nil }

    /// Sets `formpost_uploads_in_progress{protocol="ietf"}` to the uploads kept
    /// unfinished (``ReceiverMetrics``): when the metrics are scraped.
    func reportInProgress() {
        ReceiverMetrics.inProgress(.ietf, store.census.all.values.filter { !$0.complete }.count)
    }

    /// Answers one request that ``handles(_:)-(ReceiverRequest)``.
    public func respond(to request: ReceiverRequest) async -> ReceiverResponse {
        let line = RequestLogLine()
        let request = line.counting(request)
        let version = DraftInterop.version(of: request.headers)
        var response: ReceiverResponse
        do {
            response = try await route(request, connection: request.connection, client: ClientAddress.key(request.clientAddress),
                                       granted: request.grantedMetadata, version: version)
        } catch let failure as DraftFailure {
            response = failure.response
            if let complete = failure.complete { DraftInterop.mark(&response.headers, complete: complete, version: version) }
        } catch let failure as UploadStorageFailure {
            response = UploadReceiver.json(ErrorBody(error: failure.message), status: failure.status)
        } catch {
            let (message, status) = UploadReceiver.errorAnswer(for: error)
            switch error {
            case ReceiverFailure.storage(let detail), ReceiverFailure.insufficientStorage(let detail), ReceiverFailure.unavailable(let detail):
                logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(detail)"))")
            case let failure as ObjectStorageError:
                logger.error("\(request.method) \(request.loggedPath): \(RequestLogLine.redacting("\(failure)"))")
            default:
                if UploadReceiver.isUnexpected(error) { FailureLog.log(error, of: request, to: logger) }
            }
            response = UploadReceiver.json(ErrorBody(error: message), status: status)
            if let failure = error as? ObjectStorageError, failure.isTransient { response.headers[.retryAfter] = "5" }
            if case ReceiverFailure.unavailable = error { response.headers[.retryAfter] = String(UploadEventOutbox.retryAfterSeconds) }
        }
        line.log(request, answered: response,
                 upload: RequestLogLine.upload(of: request, answered: response, basePath: basePath), to: logger)
        return response
    }

    func route(_ request: ReceiverRequest, connection: (any ReceiverConnection)?, client: String?, granted: [String: String]?, version: Int?) async throws -> ReceiverResponse {
        let id: String
        let uploads = storage
        switch UploadResourcePath(request.path, basePath: basePath) {
        case .outside:
            if request.method == .options, !DraftInterop.asksForResumableUpload(request.headers) {
                return ReceiverResponse(status: .noContent, headers: [.allow: "POST, PUT, OPTIONS", .uploadLimit: limits(contentType: nil, info: nil).fieldValue(interopVersion: version)])
            }
            return try await create(request, connection: connection, client: client, granted: granted, version: version, in: uploads)
        case .upload(let named):
            id = named
        case .collection, .unknown:
            throw DraftFailure(.notFound, "no such upload")
        }
        switch request.method {
        case .head, .get: return try await state(id, connection: connection, version: version, head: request.method == .head, in: uploads)
        case .patch: return try await append(request, id: id, connection: connection, version: version, in: uploads)
        case .delete: return try await cancel(id, connection: connection, in: uploads)
        case .options: return try await options(id, version: version, in: uploads)
        default:
            throw DraftFailure(.methodNotAllowed, "an upload resource answers HEAD, GET, PATCH, DELETE and OPTIONS")
        }
    }

    // MARK: - State

    /// The length a request of an upload at `offset` declares: `Upload-Length`, or with
    /// `Upload-Complete: ?1` the offset and `Content-Length`; nil when neither says.
    ///
    /// - Throws: ``DraftFailure`` 400 (inconsistent length) when they, or the length `known`, disagree.
    static func length(of request: ReceiverRequest, offset: Int64, completes: Bool, known: Int64?) throws -> Int64? {
        let declared = StructuredField.integer(request.headers[.uploadLength])
        var deduced: Int64?
        if completes, let contentLength = request.headers[.contentLength].flatMap(Int64.init) {
            let (sum, overflow) = offset.addingReportingOverflow(contentLength)
            guard contentLength >= 0, !overflow else {
                throw DraftFailure(response: problem(.inconsistentLength("Content-Length \(contentLength) at offset \(offset) is no length")), complete: false)
            }
            deduced = sum
        }
        let values = [declared, deduced, known].compactMap { $0 }
        guard Set(values).count <= 1, values.allSatisfy({ $0 >= offset }) else {
            throw DraftFailure(response: problem(.inconsistentLength("inconsistent length values for upload at offset \(offset): \(values.map(String.init).joined(separator: ", "))")),
                               complete: false)
        }
        return values.first
    }

    /// The limits of an upload of `contentType` (any, when nil): a form may be as large
    /// as a request body may be; another representation, as a file may be.
    func limits(contentType: String?, info: DraftUploadInfo?) -> UploadLimits {
        let configuration = receiver.configuration
        let isForm = contentType.map { $0.lowercased().hasPrefix("multipart/form-data") } ?? true
        let maxSize = isForm ? configuration.maxBodySize : min(configuration.maxBodySize, configuration.maxFileSize)
        let (now, created) = (Date().timeIntervalSince1970, info?.created ?? Date().timeIntervalSince1970)
        var maxAge = lifetime.secondsLeft(created: created)
        if let maxLifetime = objects?.maxLifetime { maxAge = min(maxAge, Int64(max(0, created + maxLifetime - now).rounded(.down))) }
        return UploadLimits(maxSize: maxSize, maxAge: maxAge)
    }

    func tooLarge(contentType: String, version: Int?) -> DraftFailure {
        let limits = limits(contentType: contentType, info: nil)
        var response = UploadReceiver.json(ErrorBody(error: "the upload exceeds the limit of \(limits.maxSize ?? 0) bytes"), status: .contentTooLarge)
        response.headers[.uploadLimit] = limits.fieldValue(interopVersion: version)
        return DraftFailure(response: response, complete: false)
    }

    static func problem(_ problem: UploadProblem) -> ReceiverResponse {
        var response = UploadReceiver.json(problem, status: .badRequest)
        response.headers[.contentType] = "application/problem+json"
        return response
    }

    /// Removes uploads older than ``expiry``, and idle ones (``UploadExpiry``). It blocks
    /// on the file system: at start.
    func removeExpired() {
        lifetime.sweep(store, locks: locks, digests: digests, logger: logger)
    }
}
