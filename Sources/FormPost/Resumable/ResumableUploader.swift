import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// Uploads a form or a file with the IETF draft "Resumable Uploads for HTTP"
/// (draft-ietf-httpbis-resumable-upload, interop version ``interopVersion``): the server
/// sees one complete request — a whole `multipart/form-data` body, say — however many
/// requests carried it, and answers it as it would have answered one. A cut connection,
/// a stalled request or a 5xx means asking the server for its offset (`HEAD`) and going
/// on from there, backing off as ``retry`` says; when a retry gained nothing, the next
/// requests are halved (down to 1 MiB, or the server's `min-append-size`). The upload
/// resource is kept in ``stateStore``, so that uploading the same form or file again after
/// a crash resumes it.
///
///     var form = MultipartForm()
///     form.append(name: "title", value: "Holiday")
///     try form.append(name: "video", fileAt: "holiday.mp4")
///     let result = try await ResumableUploader().upload(form, to: URL(string: "https://example.com/upload")!)
///     print(result.response.status, result.resumedFrom, result.bytesSent)
///
/// It creates the upload without content (the draft's careful creation, which needs no
/// `104` interim response, which AsyncHTTPClient does not surface), then appends; for a
/// body of 159 bytes sent in one request:
///
///     POST /upload                        → 201, Location: /uploads/9f0c…, Upload-Limit: max-size=10737418240
///       Upload-Draft-Interop-Version: 8
///       Upload-Complete: ?0
///       Upload-Length: 159
///       Content-Type: multipart/form-data; boundary=formpost-…
///       Content-Length: 0
///     PATCH /uploads/9f0c…                → 200, Upload-Complete: ?1, and the target's answer to the form
///       Upload-Draft-Interop-Version: 8
///       Upload-Offset: 0
///       Upload-Complete: ?1
///       Content-Type: application/partial-upload
///       Content-Length: 159
///
/// The body's remainder is produced from the plan at any offset: file parts are read
/// from their place, nothing already acknowledged is read again. A file that changes
/// since the upload began is an error, never a mixed upload; stream parts cannot be
/// resumed (`MultipartError/streamNotResumable(part:)`).
public struct ResumableUploader: Sendable {
    /// The client that sends every request (its transport, TLS, proxy and headers).
    public var client: FormPostClient
    /// The largest content of one request (`PATCH`), within the server's `max-append-size`.
    public var chunkSize: Int64
    /// How many failed requests in a row are retried, and how long to wait between them.
    public var retry: RetryPolicy
    /// Where upload resources are kept between runs; nil keeps none.
    public var stateStore: ResumeStateStore?
    /// Whether a completed upload leaves ``stateStore`` as soon as it is complete (the
    /// default). When false, its entry stays until ``forget(_:)``: a program killed after
    /// the upload completed but before it reported the answer finds the upload complete
    /// when it runs again, and gets the same answer, instead of uploading it anew.
    public var forgetsCompletedUploads = true
    /// The options of each request: rate limit, time limit, … (its retry policy is not
    /// used: ``retry`` governs).
    public var options: UploadOptions
    /// How long a request may make no progress (no byte sent, no answer) before it counts
    /// as failed: the upload then asks for the offset and goes on.
    public var stallTimeout: Duration
    /// How long the answer to a request may take once its body is all sent before the
    /// request counts as failed (the upload then asks for the offset and goes on): a server
    /// may have much to do with the last bytes (parse a whole form), and one that accepts a
    /// request and never answers it holds the upload no longer than this. "Sent" means
    /// handed to the connection: a body that fits in the socket buffers of a server that
    /// never reads it is sent too. A request without a body (`OPTIONS`, `HEAD`, a creation)
    /// has ``stallTimeout`` for its answer. Five times ``stallTimeout`` unless given.
    public var answerTimeout: Duration

    /// How many failed requests in a row are retried by default: an upload resumes after a
    /// cut unless told not to (as tus-js-client does).
    public static let defaultRetries = 5
    /// The smallest request a stalled upload is cut down to (unless the server asks for more).
    public static let minimumChunkSize: Int64 = 1 << 20
    /// The `Upload-Draft-Interop-Version` sent: 8, that of the newest text of the draft
    /// read (the editors' copy of 1 July 2026, between -11 and -12).
    public static let interopVersion = DraftInterop.current

    #if os(watchOS)
    /// An uploader sending through `client`; by default 64 MiB per request,
    /// ``defaultRetries`` retries in a row, 60 s without progress for a stalled request, five
    /// times that (300 s) for an answer once a request is sent, and the user's store.
    ///
    /// On watchOS FormPost has no default client (apps have URLSession only, Apple TN3135):
    /// pass FormPostURLSession's `FormPostClient()`, on `URLSessionTransport.shared`.
    public init(client: FormPostClient, chunkSize: Int64 = 64 << 20, retry: RetryPolicy = RetryPolicy(maxRetries: defaultRetries),
                stateStore: ResumeStateStore? = .standard, options: UploadOptions = UploadOptions(), stallTimeout: Duration = .seconds(60),
                answerTimeout: Duration? = nil) {
        self.init(sendingThrough: client, chunkSize: chunkSize, retry: retry, stateStore: stateStore, options: options,
                  stallTimeout: stallTimeout, answerTimeout: answerTimeout)
    }
    #else
    /// An uploader; by default 64 MiB per request, ``defaultRetries`` retries in a row, 60 s
    /// without progress for a stalled request, five times that (300 s) for an answer once a
    /// request is sent, and the user's store.
    public init(client: FormPostClient = FormPostClient(), chunkSize: Int64 = 64 << 20, retry: RetryPolicy = RetryPolicy(maxRetries: defaultRetries),
                stateStore: ResumeStateStore? = .standard, options: UploadOptions = UploadOptions(), stallTimeout: Duration = .seconds(60),
                answerTimeout: Duration? = nil) {
        self.init(sendingThrough: client, chunkSize: chunkSize, retry: retry, stateStore: stateStore, options: options,
                  stallTimeout: stallTimeout, answerTimeout: answerTimeout)
    }
    #endif

    private init(sendingThrough client: FormPostClient, chunkSize: Int64, retry: RetryPolicy, stateStore: ResumeStateStore?,
                 options: UploadOptions, stallTimeout: Duration, answerTimeout: Duration?) {
        self.client = client
        var options = options
        options.retry = .none
        self.options = options
        self.chunkSize = max(chunkSize, 1)
        self.retry = retry
        self.stateStore = stateStore
        self.stallTimeout = stallTimeout
        self.answerTimeout = answerTimeout ?? stallTimeout * 5
    }

    /// Uploads `form` to `url` with `method` (POST by default), or goes on with an upload
    /// of the same form begun before (the same text, and the same files, unchanged: the
    /// body is then framed by the boundary of that run). The result's response is the
    /// target's answer to the whole form.
    ///
    /// - Throws: ``ResumableUploadError``; `MultipartError` for a form that
    ///   cannot be planned or holds a stream.
    public func upload(_ form: MultipartForm, to url: URL, method: RequestMethod = .post, headers: HTTPFields = [:],
                       progress: (@Sendable (ResumableProgress) -> Void)? = nil) async throws -> ResumableUploadResult {
        var form = form
        var entry = try Self.entry(of: form, endpoint: url)
        if let kept = stateStore?.load(matching: entry), let boundary = kept.boundary {
            form.boundary = try Boundary(resuming: boundary)
        }
        entry.boundary = form.boundary.value
        let plan = try form.plan()
        let exchange = DraftExchange(method: method, contentType: plan.contentType, representationFields: [:])
        return try await run(exchange, plan: plan, entry: entry, endpoint: url, headers: headers, progress: progress)
    }

    /// Uploads the file at `path` as the whole content of a request to `url` with
    /// `method` (POST by default), its `Content-Type` the file name's MIME type unless
    /// given, and `Content-Disposition: inline; filename="…"`; or goes on with an upload
    /// of it begun before. The result's response is the target's answer to the file.
    ///
    /// - Throws: ``ResumableUploadError``, or the file's errors when it cannot be read.
    public func upload(fileAt path: String, to url: URL, method: RequestMethod = .post, contentType: String? = nil, headers: HTTPFields = [:],
                       progress: (@Sendable (ResumableProgress) -> Void)? = nil) async throws -> ResumableUploadResult {
        let file = try ResumableFile(path: path, contentType: contentType)
        let disposition = "inline; filename=\"\(ContentDisposition.escape(file.name))\""
        let exchange = DraftExchange(method: method, contentType: file.body.contentType, representationFields: [.contentDisposition: disposition])
        return try await run(exchange, plan: file.body.plan, entry: file.entry(endpoint: url, protocolName: DraftExchange.protocolName), endpoint: url, headers: headers, progress: progress)
    }

    /// Cancels the upload resource at `uploadURL` (`DELETE`); one already gone (404, 410)
    /// counts as cancelled.
    ///
    /// - Throws: ``ResumableUploadError/unexpectedStatus(_:during:bodyPrefix:)`` for another
    ///   answer than 2xx, 404 or 410; transport errors.
    public func cancel(_ uploadURL: URL, headers: HTTPFields = [:]) async throws {
        let answer = try await sender(headers: headers).send(.delete, uploadURL)
        guard (200..<300).contains(answer.status) || answer.status == 404 || answer.status == 410 else {
            throw ResumableUploadError.unexpectedStatus(answer.status, during: "the cancellation of \(uploadURL.absoluteString)", bodyPrefix: answer.bodyPrefix)
        }
    }

    /// Cancels the upload of the file at `path` to `url` that an earlier run left
    /// unfinished, and forgets it. Returns the upload resource's URL, or nil when none was kept.
    public func abandonUpload(fileAt path: String, to url: URL, headers: HTTPFields = [:]) async throws -> URL? {
        try await abandon(try ResumableFile(path: path).entry(endpoint: url, protocolName: DraftExchange.protocolName), headers: headers)
    }

    /// Cancels the upload of `form` to `url` that an earlier run left unfinished, and
    /// forgets it. Returns the upload resource's URL, or nil when none was kept.
    public func abandonUpload(_ form: MultipartForm, to url: URL, headers: HTTPFields = [:]) async throws -> URL? {
        try await abandon(try Self.entry(of: form, endpoint: url), headers: headers)
    }

    private func abandon(_ entry: ResumeEntry, headers: HTTPFields) async throws -> URL? {
        guard let kept = stateStore?.load(matching: entry), let uploadURL = URL(string: kept.uploadURL) else { return nil }
        try await cancel(uploadURL, headers: headers)
        stateStore?.remove(matching: entry)
        return uploadURL
    }

    private func run(_ exchange: DraftExchange, plan: BodyPlan, entry: ResumeEntry, endpoint: URL, headers: HTTPFields,
                     progress: (@Sendable (ResumableProgress) -> Void)?) async throws -> ResumableUploadResult {
        let run = ResumableRun(exchange: exchange, sender: sender(headers: headers), plan: plan, retry: retry, stateStore: stateStore, forgetsOnCompletion: forgetsCompletedUploads,
                               chunkSize: chunkSize, minimumChunkSize: Self.minimumChunkSize, entry: entry, progress: progress)
        return try await run.perform(endpoint: endpoint)
    }

    /// Forgets the completed upload of `result` (kept when ``forgetsCompletedUploads`` is
    /// false), once its answer is reported: the next upload of the same body starts anew.
    public func forget(_ result: ResumableUploadResult) {
        if let entry = result.entry { stateStore?.remove(matching: entry) }
    }

    private func sender(headers: HTTPFields) -> ResumableRequestSender {
        ResumableRequestSender(client: client, options: options, headers: headers,
                               protocolFields: [.uploadDraftInteropVersion: String(Self.interopVersion)],
                               stallLimit: stallTimeout, answerLimit: answerTimeout)
    }

    /// The state store's entry of an upload of `form` to `endpoint`, keyed by the form's identity.
    private static func entry(of form: MultipartForm, endpoint: URL) throws -> ResumeEntry {
        ResumeEntry(uploadURL: "", path: "form:" + (try identity(of: form)), size: try form.plan().contentLength ?? 0, modified: 0,
                    endpoint: endpoint.absoluteString, protocolName: DraftExchange.protocolName)
    }

    /// The SHA-256 (hexadecimal) of what identifies `form`'s body whatever its boundary:
    /// its parts' headers and text, and each file's path, size and identity.
    ///
    /// - Throws: `MultipartError/streamNotResumable(part:)` for a stream part.
    static func identity(of form: MultipartForm) throws -> String {
        var probe = form
        probe.boundary = try Boundary(identityBoundary)
        var hasher = SHA256Hasher()
        try probe.plan().feedIdentity { hasher.update(bufferPointer: $0) }
        return Hexadecimal.string(hasher.finalize())
    }

    /// The boundary a form's identity is computed with.
    private static let identityBoundary = "formpost-identity-5f3a9c1e0b7d4e62a8c4d1f09e7b3a65"
}
