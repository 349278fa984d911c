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
/// upload expires `expiry` after its last activity (`Upload-Limit`'s `max-age` still counts
/// from its creation), the idle expiry and the limits of uploads in progress are not
/// counted, and a sweep (`ObjectStorage/sweepInterval`) takes up completions and removes
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
    /// The parses of forms in progress, kept between their appends.
    let formProgresses = FormProgresses()
    let retries = CompletionRetries()
    /// Where uploads are kept when the configuration names object storage, else nil (the disk).
    let objects: DraftObjects?
    /// The sweep of the uploads kept in object storage, if they are.
    let objectSweep: ObjectUploadSweep<DraftUploadInfo>?
    let logger: Logger
    private let lifetime: UploadExpiry
    private let admission: UploadAdmission
    private let threadPool: NIOThreadPool

    /// The receiver's resumable forms, stored as ``store`` says.
    private var forms: ResumableForms {
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
                                    name: "resumable", fileMode: receiver.configuration.storedFileMode, events: receiver.configuration.events)
        store.completionFault = completionFault
        self.store = store
        let configuration = receiver.configuration
        objects = DraftObjects(configuration: configuration, name: "resumable")
        self.logger = logger
        objectSweep = objects.map { [checked = self.basePath] in ObjectUploadSweep(store: $0, expiry: expiry, basePath: checked, logger: logger) }
        self.lifetime = UploadExpiry(lifetime: expiry, idle: receiver.configuration.idleUploadExpiry, progresses: formProgresses, retries: retries,
                                     kind: .ietf)
        self.admission = UploadAdmission(configuration: receiver.configuration)
        self.threadPool = .singleton
        // Uploads whose every byte is acknowledged are noted first: the sweep keeps them.
        findUnfinishedCompletions()
        removeExpired()
        Self.completeFull(retries, in: store, locks: locks, lifetime: lifetime, logger: logger)
        lifetime.startSweeping(store, locks: locks, digests: digests, logger: logger, threadPool: threadPool) { [store, locks, retries, logger] expiry in
            Self.completeFull(retries, in: store, locks: locks, lifetime: expiry, logger: logger)
        }
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
        } catch let failure as ObjectUploadFailure {
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

    private func route(_ request: ReceiverRequest, connection: (any ReceiverConnection)?, client: String?, granted: [String: String]?, version: Int?) async throws -> ReceiverResponse {
        let id: String
        switch UploadResourcePath(request.path, basePath: basePath) {
        case .outside:
            if request.method == .options, !DraftInterop.asksForResumableUpload(request.headers) {
                return ReceiverResponse(status: .noContent, headers: [.allow: "POST, PUT, OPTIONS", .uploadLimit: limits(contentType: nil, info: nil).fieldValue(interopVersion: version)])
            }
            return try await create(request, connection: connection, client: client, granted: granted, version: version)
        case .upload(let named):
            id = named
        case .collection, .unknown:
            throw DraftFailure(.notFound, "no such upload")
        }
        if let objects { return try await routeObject(request, id: id, connection: connection, version: version, in: objects) }
        switch request.method {
        case .head, .get: return try await state(id, connection: connection, version: version, head: request.method == .head)
        case .patch: return try await append(request, id: id, connection: connection, version: version)
        case .delete: return try await cancel(id, connection: connection)
        case .options:
            let info = try await described(id)
            return ReceiverResponse(status: .noContent, headers: [.allow: "HEAD, GET, PATCH, DELETE, OPTIONS",
                                                          .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)])
        default:
            throw DraftFailure(.methodNotAllowed, "an upload resource answers HEAD, GET, PATCH, DELETE and OPTIONS")
        }
    }

    // MARK: - Requests

    /// A request to a target that asks for a resumable upload: the upload resource is
    /// created for `client` (its address) if `UploadAdmission` takes it (and announced at
    /// once in a 104), then the request's content appended.
    private func create(_ request: ReceiverRequest, connection: (any ReceiverConnection)?, client: String?, granted: [String: String]?, version: Int?) async throws -> ReceiverResponse {
        guard request.method == .post || request.method == .put else {
            throw DraftFailure(.methodNotAllowed, "a resumable upload is created with POST or PUT")
        }
        guard let completes = DraftInterop.completes(request.headers, version: version) else {
            throw DraftFailure(.badRequest, "Upload-Complete is not a Boolean (?0 or ?1)")
        }
        let contentType = request.headers[.contentType] ?? MIMEType.octetStream
        let contentLength = request.headers[.contentLength].flatMap(Int64.init)
        var length = try Self.length(of: request, offset: 0, completes: completes, known: nil)
        let limit = limits(contentType: contentType, info: nil).maxSize ?? Int64.max
        if let length, length > limit { throw tooLarge(contentType: contentType, version: version) }
        if let contentLength, contentLength > limit { throw tooLarge(contentType: contentType, version: version) }
        var info = DraftUploadInfo(created: Date().timeIntervalSince1970, length: length, method: request.method.rawValue, path: request.path,
                                   contentType: contentType, contentDisposition: request.headers[.contentDisposition])
        info.client = client
        info.granted = granted
        if let objects { return try await createObject(request, info: info, completes: completes, connection: connection, version: version, in: objects) }
        let (store, receiver, created) = (self.store, self, info)
        let (id, token) = try await threadPool.runIfActive {
            do {
                return try receiver.admission.admit(created, created: created.created, client: client, connection: connection, store: store,
                                                    expiry: receiver.lifetime, locks: receiver.locks, digests: receiver.digests, logger: receiver.logger)
            } catch let refusal as UploadAdmission.Refusal {
                var busy = UploadReceiver.json(ErrorBody(error: refusal.message), status: .serviceUnavailable)
                busy.headers[.retryAfter] = "60"
                throw DraftFailure(response: busy, complete: nil)
            }
        }
        let location = basePath + "/" + id
        defer { locks.release(id, token: token) }
        ReceiverMetrics.upload(.ietf, .created)
        await announceResumption(at: location, info: info, connection: connection, version: version)
        let (outcome, received) = try await write(request.body, to: id, info: info, at: 0, version: version)
        if outcome.cut {
            logger.notice("\(request.method) \(request.loggedPath) cut at \(outcome.offset) bytes; upload \(RequestLogLine.shortID(id)) kept")
            throw DraftFailure(.badRequest, "the request was cut short; its upload goes on at \(location)", complete: false)
        }
        if completes {
            length = length ?? outcome.offset
            info.length = length
            return try await finish(id, info: info, offset: outcome.offset, received: received, version: version, location: location)
        }
        var headers: HTTPFields = [.location: location, .uploadOffset: String(outcome.offset),
                                   .uploadLimit: limits(contentType: contentType, info: info).fieldValue(interopVersion: version)]
        DraftInterop.mark(&headers, complete: false, version: version)
        return ReceiverResponse(status: .created, headers: headers)
    }

    /// Tells a client that speaks a supported interop version where its new upload
    /// resource is, in a `104` interim response, before its body is read.
    func announceResumption(at location: String, info: DraftUploadInfo, connection: (any ReceiverConnection)?, version: Int?) async {
        guard let connection, let version, DraftInterop.supported.contains(version) else { return }
        await connection.sendInterim(.uploadResumptionSupported, fields: [
            .location: location, .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version),
            .uploadDraftInteropVersion: String(version),
        ])
    }

    /// Where an upload stands: `HEAD` (no content) and `GET` (its state as JSON, or once
    /// complete the target's answer again).
    private func state(_ id: String, connection: (any ReceiverConnection)?, version: Int?, head: Bool) async throws -> ReceiverResponse {
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        let (info, offset) = try await current(id)
        if !head, let answer = info.answer { return replay(answer, version: version) }
        var headers: HTTPFields = [.uploadOffset: String(offset), .cacheControl: "no-store",
                                   .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)]
        if let length = info.length { headers[.uploadLength] = String(length) }
        DraftInterop.mark(&headers, complete: info.answer != nil, version: version)
        if head { return ReceiverResponse(status: .noContent, headers: headers) }
        var response = UploadReceiver.json(DraftUploadState(complete: false, length: info.length, offset: offset), status: .ok)
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    /// The offset an append claims and whether it completes the upload, from its fields.
    ///
    /// - Throws: ``DraftFailure`` 415 for an append of another media type than the
    ///   version's, 400 without a valid `Upload-Offset` or `Upload-Complete`.
    static func appending(_ request: ReceiverRequest, version: Int?) throws -> (claimed: Int64, completes: Bool) {
        if DraftInterop.requiresPartialUploadType(version) {
            let type = (request.headers[.contentType] ?? "").split(separator: ";").first.map { $0.trimmingOptionalWhitespace().lowercased() }
            guard type == DraftInterop.partialUpload else {
                throw DraftFailure(.unsupportedMediaType, "an append's Content-Type is \(DraftInterop.partialUpload)")
            }
        }
        guard let claimed = StructuredField.integer(request.headers[.uploadOffset]) else {
            throw DraftFailure(.badRequest, "Upload-Offset is missing or not a non-negative integer")
        }
        guard let completes = DraftInterop.completes(request.headers, version: version) else {
            throw DraftFailure(.badRequest, "Upload-Complete is missing or not a Boolean (?0 or ?1)")
        }
        return (claimed, completes)
    }

    /// The answer to an append that claims another offset than the upload's: 409, the
    /// problem document, and the offset.
    static func mismatchingOffset(expected: Int64, provided: Int64) -> DraftFailure {
        var response = UploadReceiver.json(UploadProblem.mismatchingOffset(expected: expected, provided: provided), status: .conflict)
        response.headers[.contentType] = "application/problem+json"
        response.headers[.uploadOffset] = String(expected)
        return DraftFailure(response: response, complete: false)
    }

    /// `PATCH`: appends at the upload's offset; with `Upload-Complete: ?1`, the last bytes.
    private func append(_ request: ReceiverRequest, id: String, connection: (any ReceiverConnection)?, version: Int?) async throws -> ReceiverResponse {
        let (claimed, completes) = try Self.appending(request, version: version)
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        var (info, offset) = try await current(id)
        guard claimed == offset else { throw Self.mismatchingOffset(expected: offset, provided: claimed) }
        if let answer = info.answer {
            // The final answer of a complete upload, again: for a client that lost it.
            guard completes, (request.headers[.contentLength].flatMap(Int64.init) ?? 0) == 0 else {
                throw DraftFailure(.badRequest, "the upload is complete: nothing can be appended", complete: false)
            }
            return replay(answer, version: version)
        }
        let length = try Self.length(of: request, offset: offset, completes: completes, known: info.length)
        if let length, length > (limits(contentType: info.contentType, info: info).maxSize ?? Int64.max) {
            throw tooLarge(contentType: info.contentType, version: version)
        }
        if info.length == nil, let length {
            info.length = length
            let (store, saved) = (self.store, info)
            try await threadPool.runIfActive { try store.save(saved, id: id) }
        }
        let (outcome, received) = try await write(request.body, to: id, info: info, at: offset, version: version)
        if outcome.cut {
            logger.notice("PATCH \(request.loggedPath) cut at \(outcome.offset) bytes")
            throw DraftFailure(.badRequest, "the request was cut short", complete: false)
        }
        let location = basePath + "/" + id
        if completes {
            info.length = info.length ?? outcome.offset
            return try await finish(id, info: info, offset: outcome.offset, received: received, version: version, location: location)
        }
        var headers: HTTPFields = [.uploadOffset: String(outcome.offset),
                                   .uploadLimit: limits(contentType: info.contentType, info: info).fieldValue(interopVersion: version)]
        DraftInterop.mark(&headers, complete: false, version: version)
        return ReceiverResponse(status: .noContent, headers: headers)
    }

    /// `DELETE`: ends a request that holds the upload, and removes it (a completed one's
    /// stored files stay: they are the target's).
    private func cancel(_ id: String, connection: (any ReceiverConnection)?) async throws -> ReceiverResponse {
        guard let token = await locks.acquireEndingHolder(id, connection: connection) else { throw DraftFailure(.locked, "the upload is held by another request") }
        defer { locks.release(id, token: token) }
        let (info, _) = try await current(id)
        let store = self.store
        let receipt = info.answer.flatMap { $0.status == 200 ? try? JSONDecoder().decode(Receipt.self, from: Data($0.json.utf8)) : nil }
        let ended = info.event(receipt: receipt ?? Receipt())
        try await threadPool.runIfActive {
            // Recorded first: an end the application will not hear of is never answered.
            try store.announce(ended, as: nil, type: UploadEvent.postTerminate)
            store.remove(id)
        }
        digests.remove(id)
        forms.progresses.remove(id)
        return ReceiverResponse(status: .noContent)
    }

    // MARK: - Content

    /// Appends `body` to upload `id` at `offset`, not past its length (or the limit); the
    /// running SHA-256 of a representation that is not a form is kept. Returns how the
    /// append ended and how many of the upload's bytes have arrived: its offset, or for a
    /// form more, by the bytes its parse holds back.
    ///
    /// - Throws: ``DraftFailure`` 413 when the body goes past the length: the upload is then
    ///   removed (its offset may not exceed its length). The failure of a write (507 for a
    ///   full disk): the upload then ends where the bytes written in order do.
    private func write(_ body: ReceiverRequestBody, to id: String, info: DraftUploadInfo, at offset: Int64,
                       version: Int?) async throws -> (outcome: BodyAppender.Outcome, received: Int64) {
        let store = self.store
        let limit = info.length ?? limits(contentType: info.contentType, info: info).maxSize ?? Int64.max
        if info.isForm { return try await writeForm(body, to: id, info: info, at: offset, limit: limit, version: version) }
        let descriptor = try await threadPool.runIfActive { try store.openForAppend(id) }
        var digest = digests.take(id, at: offset)
        var checksum: ChecksumHasher?
        let outcome = await BodyAppender(threadPool: threadPool).append(body, to: descriptor, at: offset, limit: limit, digest: &digest, checksum: &checksum)
        if let failure = outcome.failure {
            // Nothing after the failed write counts: the data ends where the bytes written in order do.
            try? await threadPool.runIfActive { try store.cutBack(id, to: outcome.offset) }
            if let digest { digests.put(id, digest, offset: outcome.offset) }
            throw failure
        }
        if outcome.overflowed {
            try await threadPool.runIfActive { store.remove(id) }
            digests.remove(id)
            throw DraftFailure(.contentTooLarge, "the content goes past the upload's length of \(limit) bytes: the upload is removed")
        }
        if let digest { digests.put(id, digest, offset: outcome.offset) }
        return (outcome, outcome.offset)
    }

    /// Appends `body` to the form `id` at `offset`, parsed as it arrives (``ResumableForms``).
    ///
    /// - Throws: ``DraftFailure`` with the form's answer, for good, when it is malformed or
    ///   past a limit; 413 when the body goes past the length (the upload is then removed);
    ///   the failure of a write (the upload then ends where its bytes on disk do).
    private func writeForm(_ body: ReceiverRequestBody, to id: String, info: DraftUploadInfo, at offset: Int64, limit: Int64,
                           version: Int?) async throws -> (outcome: BodyAppender.Outcome, received: Int64) {
        let outcome = try await forms.append(body, to: id, info: info, at: offset, limit: limit)
        if let failure = outcome.failure { throw failure }
        if let fault = outcome.formFault {
            let answered = try await forms.fault(fault, id: id, info: info)
            logger.notice("upload \(RequestLogLine.shortID(id)): the form is refused: \(fault)")
            throw DraftFailure(response: replay(answered.answer!, version: version), complete: nil)
        }
        if outcome.overflowed {
            let store = self.store
            try await threadPool.runIfActive { store.remove(id) }
            forms.progresses.remove(id)
            throw DraftFailure(.contentTooLarge, "the content goes past the upload's length of \(limit) bytes: the upload is removed")
        }
        return (BodyAppender.Outcome(offset: outcome.offset, cut: outcome.cut, overflowed: false), outcome.received)
    }

    /// Answers the whole representation of upload `id`, now complete at `offset` bytes
    /// (`received` of them arrived: for a form, more than its offset when its parse holds
    /// its last bytes back): a form's files are moved into the directory, anything else
    /// stored as one file. The answer is kept, to be given again. A form whose every byte
    /// arrived but whose parse still holds some back ends before its closing delimiter:
    /// it is answered 400, for good.
    private func finish(_ id: String, info: DraftUploadInfo, offset: Int64, received: Int64, version: Int?,
                        location: String) async throws -> ReceiverResponse {
        guard offset == info.length else {
            if info.isForm, received == info.length, let refused = try await forms.refuseUnfinished(id, info: info, at: offset)?.answer {
                logger.notice("upload \(RequestLogLine.shortID(id)): the form ends before its closing delimiter")
                var response = replay(refused, version: version)
                response.headers[.location] = location
                throw DraftFailure(response: response, complete: nil)
            }
            throw DraftFailure(response: Self.problem(.inconsistentLength("the upload was completed at \(offset) bytes, not at its length of \(info.length ?? 0)")), complete: false)
        }
        guard info.isForm else { return try await storeFile(id, info: info, offset: offset, version: version, location: location) }
        let answer: StoredAnswer
        do {
            answer = try await forms.complete(id, info: info).answer!
        } catch {
            retries.add(id)
            throw error
        }
        retries.remove(id)
        digests.remove(id)
        logger.info("upload \(RequestLogLine.shortID(id)) complete: \(offset) bytes, answered \(answer.status)")
        ReceiverMetrics.upload(.ietf, .completed)
        var response = replay(answer, version: version)
        response.headers[.location] = location
        return response
    }

    /// Stores the representation of upload `id`, complete at `offset` bytes, as one file —
    /// under the name and SHA-256 an earlier attempt recorded, or new ones — saves its
    /// receipt as the upload's answer and removes its data, in steps a crash cannot tear
    /// (``UploadStore/complete(_:as:pending:done:)``); answers that receipt. When that fails,
    /// the completion is tried again (``CompletionRetries``) until it succeeds.
    private func storeFile(_ id: String, info: DraftUploadInfo, offset: Int64, version: Int?, location: String) async throws -> ReceiverResponse {
        let sha256 = digests.take(id, at: offset).map { Hexadecimal.string($0.finalize()) }
        let store = self.store
        let answer: StoredAnswer
        do {
            answer = try await threadPool.runIfActive { try Self.storeFile(id, info: info, offset: offset, sha256: sha256, in: store) }
        } catch {
            retries.add(id)
            throw error
        }
        retries.remove(id)
        logger.info("upload \(RequestLogLine.shortID(id)) complete: \(offset) bytes, answered \(answer.status)")
        ReceiverMetrics.upload(.ietf, .completed)
        var response = replay(answer, version: version)
        response.headers[.location] = location
        return response
    }

    /// Stores the representation of upload `id`, complete at `offset` bytes, as
    /// ``storeFile(_:info:offset:version:location:)`` says (its SHA-256 `sha256`, or read from
    /// its data when nil); returns its answer. It blocks on the file system.
    private static func storeFile(_ id: String, info: DraftUploadInfo, offset: Int64, sha256: String?, in store: UploadStore) throws -> StoredAnswer {
        let completion = try info.completing ?? store.plannedCompletion(id, sha256: sha256)
        let receipt = info.receipt(id: id, size: offset, as: completion)
        let answer = StoredAnswer(status: 200, json: String(decoding: UploadReceiver.encodeJSON(receipt), as: UTF8.self))
        var pending = info, done = info
        pending.completing = completion
        done.completing = nil
        done.answer = answer
        try store.complete(id, as: completion, pending: pending, done: done, announcing: info.event(receipt: receipt))
        return answer
    }

    // MARK: - Completions taken up again

    /// Notes for a completion (``CompletionRetries``) the uploads whose completion began
    /// and did not end: a form answered whose files are not all moved, a representation
    /// whose completion is recorded. It reads the state of each upload in progress: at start.
    private func findUnfinishedCompletions() {
        for (id, entry) in store.census.all where !entry.complete && !entry.creating {
            guard let info = store.load(id, as: DraftUploadInfo.self) else { continue }
            if info.storingParts != nil || (info.answer == nil && info.completing != nil) { retries.add(id) }
        }
    }

    /// Tries again the completions of `retries` that no request holds now (one that does
    /// completes it itself). It blocks on the file system: at start, and in each sweep.
    private static func completeFull(_ retries: CompletionRetries, in store: UploadStore, locks: UploadLocks, lifetime: UploadExpiry, logger: Logger) {
        for id in retries.all {
            guard let token = locks.acquire(id) else { continue }
            defer { locks.release(id, token: token) }
            do {
                if try completeAgain(id, in: store, lifetime: lifetime) {
                    logger.info("upload \(RequestLogLine.shortID(id)) complete, its completion taken up again")
                    ReceiverMetrics.upload(.ietf, .completed)
                }
                retries.remove(id)
            } catch {
                logger.error("upload \(RequestLogLine.shortID(id)): completing it again failed, to be tried again: \(RequestLogLine.redacting("\(error)"))")
            }
        }
    }

    /// Finishes the completion of upload `id` if one began and did not end (and it has not
    /// expired): a form's files moved, a representation stored; whether there was one to
    /// finish. It blocks on the file system; call it under the upload's lock.
    private static func completeAgain(_ id: String, in store: UploadStore, lifetime: UploadExpiry) throws -> Bool {
        guard let info = store.load(id, as: DraftUploadInfo.self), !lifetime.hasExpired(id, created: info.created, in: store) else { return false }
        if info.answer != nil {
            guard info.storingParts != nil else { return false }
            _ = try ResumableForms.settle(id, info: info, in: store)
            return true
        }
        // A representation whose every byte is there: its completion failed, recorded or not
        // (before its name was: the stored file's name and SHA-256 are planned now).
        guard !info.isForm, let length = info.length, store.dataSize(id) == length else { return false }
        _ = try storeFile(id, info: info, offset: length, sha256: nil, in: store)
        return true
    }

    /// A kept answer, as a response with `Upload-Complete: ?1`.
    func replay(_ answer: StoredAnswer, version: Int?) -> ReceiverResponse {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        DraftInterop.mark(&headers, complete: true, version: version)
        return ReceiverResponse(status: HTTPResponse.Status(code: answer.status), headers: headers, body: ByteBuffer(string: answer.json))
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

    /// The upload `id` and its offset (its length once complete), read under its lock,
    /// which the caller holds: what a completion that stopped left undone is done.
    ///
    /// - Throws: ``DraftFailure`` 404 for an unknown upload, 410 for an expired one (which is
    ///   removed).
    private func current(_ id: String) async throws -> (DraftUploadInfo, Int64) {
        let (store, lifetime, locks, digests, progresses, retries) = (self.store, self.lifetime, self.locks, self.digests, self.formProgresses, self.retries)
        return try await threadPool.runIfActive {
            guard let loaded = store.load(id, as: DraftUploadInfo.self) else { throw DraftFailure(.notFound, "no such upload") }
            if lifetime.hasExpired(id, created: loaded.created, in: store) {
                UploadExpiry.remove(id, from: store, locks: locks, digests: digests, progresses: progresses, held: true)
                throw DraftFailure(.gone, "the upload expired")
            }
            // What a completion that stopped left undone is done: a form's files moved, the data removed.
            let info: DraftUploadInfo
            do {
                info = try ResumableForms.settle(id, info: loaded, in: store)
            } catch {
                retries.add(id)
                throw error
            }
            if info.answer != nil { store.removeData(id) }
            guard info.answer == nil else { return (info, info.length ?? 0) }
            return (info, info.isForm ? ResumableForms.offset(of: id, in: store) : store.offset(id))
        }
    }

    /// The upload `id` as its state says, read without its lock: nothing of it is moved or
    /// made (a request holding it may be completing it).
    ///
    /// - Throws: ``DraftFailure`` 404 for an unknown upload, 410 for an expired one (which is
    ///   removed, now if no other request holds it, else by a later sweep).
    private func described(_ id: String) async throws -> DraftUploadInfo {
        let (store, lifetime, locks, digests, progresses) = (self.store, self.lifetime, self.locks, self.digests, self.formProgresses)
        return try await threadPool.runIfActive {
            guard let info = store.load(id, as: DraftUploadInfo.self) else { throw DraftFailure(.notFound, "no such upload") }
            if lifetime.hasExpired(id, created: info.created, in: store) {
                UploadExpiry.remove(id, from: store, locks: locks, digests: digests, progresses: progresses, held: false)
                throw DraftFailure(.gone, "the upload expired")
            }
            return info
        }
    }

    /// The limits of an upload of `contentType` (any, when nil): a form may be as large
    /// as a request body may be; another representation, as a file may be.
    func limits(contentType: String?, info: DraftUploadInfo?) -> UploadLimits {
        let configuration = receiver.configuration
        let isForm = contentType.map { $0.lowercased().hasPrefix("multipart/form-data") } ?? true
        let maxSize = isForm ? configuration.maxBodySize : min(configuration.maxBodySize, configuration.maxFileSize)
        return UploadLimits(maxSize: maxSize, maxAge: lifetime.secondsLeft(created: info?.created ?? Date().timeIntervalSince1970))
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
    private func removeExpired() {
        lifetime.sweep(store, locks: locks, digests: digests, logger: logger)
    }
}
