import FormPost
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Multipart
import Synchronization

/// A transport on URLSession (FoundationNetworking on Linux, native on Apple platforms).
///
/// How each request goes is decided in one place, `URLSessionTaskRoute`: bodies of known
/// length up to `inMemoryLimit` are sent as data; larger ones, and those of unknown
/// length, are produced from the plan as they are sent (`StreamedUploadBody`): on Apple
/// platforms URLSession reads the input end of a bound stream pair that a dedicated thread
/// writes (`BodyStreamPump`), on Linux an `InputStream` of the plan (`PlanInputStream`).
/// URLSession's `needNewBodyStream` gets a fresh one each time. On Linux FoundationNetworking
/// sends stream bodies chunked, so they go without `Content-Length` there.
///
/// A body that fails while it is sent — a file that changed size, a stream part that
/// yielded more or fewer bytes than declared — ends the exchange with that
/// `MultipartError`, not a transport error: each exchange keeps the failure
/// record of the stream URLSession was last given, and reads it first when the task
/// completes. (The task's `originalRequest` cannot tell: URLSession ignores its body
/// stream for streamed uploads and asks the delegate instead.)
///
/// Progress comes from `didSendBodyData`. Redirects are returned to `FormPostClient`,
/// which decides whether the body is sent again and which header fields follow
/// (`RedirectRule`) — except on background sessions, see below.
///
/// With `uploadsFromFile` (always so for background sessions), every body is sent with
/// `uploadTask(with:fromFile:)`, as background sessions require and Alamofire does: a raw
/// file body from its own file, anything else encoded to a temporary file first, which is
/// removed when the exchange ends (answered, failed or cancelled).
///
/// ## Background sessions (Apple platforms)
///
/// A transport made by `background(identifier:)` (or on any configuration with an
/// identifier) differs in two ways:
/// - The system follows redirects itself and never calls
///   `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`, so
///   `FormPostClient`'s redirect handling is bypassed: it sees only the final answer.
///   `UploadOptions.maxRedirects` (even 0) and `keepsCredentialsAcrossOrigins` have no
///   effect; the body is not re-sent from the plan on 307/308, and `Authorization`,
///   `Cookie` and `Proxy-Authorization` are not dropped on a redirect to another origin
///   by `RedirectRule`: whatever the system does applies instead. Use an ordinary
///   transport where a redirect may lead to another origin with credentials.
/// - Background sessions run upload tasks from a file, and data tasks only while the app
///   is not suspended. So requests without a body (a tus `HEAD` or `DELETE`, the `GET`
///   after a 303) go through a companion ordinary session — the `.default` configuration
///   with the background one's additional header fields, cookie and credential storage,
///   proxies and request timeout, and the same delegate — made with the transport and
///   invalidated with it by ``invalidate()``.
///
/// ## Across suspension and relaunch (Apple platforms)
///
/// A background session's uploads go on while the app is suspended or not running. An
/// upload whose caller still awaits it (the app was only suspended) answers that caller.
/// One that finished after its caller was gone — the app was terminated and relaunched for
/// the session's events, or a later run made the transport again — has its result
/// delivered by ``finishedUploads``, an `AsyncSequence` of ``BackgroundUploadResult``.
/// `background(identifier:)` returns the one transport of an identifier in the process
/// (made at its first call), which re-attaches to the session the system kept.
/// ``handleEventsForBackgroundURLSession(completionHandler:)`` takes the completion handler
/// of the app delegate's `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
/// and calls it, on the main actor, once the session has delivered its events
/// (`urlSessionDidFinishEvents(forBackgroundURLSession:)`) and every result delivered by
/// then was taken from ``finishedUploads`` by an iteration that came back for the next.
///
/// A background transport writes its temporary body files in a directory of its session
/// (`FormPost-background-uploads/IDENTIFIER` in the caches directory, unless given another)
/// and names each file in its task's `taskDescription`, which the system keeps across
/// relaunches: a file is removed when its task completes, in whichever run of the app, and
/// files that no task of the session names any more (the app ended before their task
/// completed or was made) are removed when the transport is made.
///
/// ## The IETF draft "Resumable Uploads for HTTP"
///
/// On iOS 17, macOS 14 and later, URLSession itself speaks an early version of the draft
/// (draft-ietf-httpbis-resumable-upload-01) with servers that support it, resuming upload
/// tasks after short interruptions on its own, and may add its own `Upload-*` fields
/// beside those `ResumableUploader` sets. This transport sends every request as FormPost
/// built it: it adds, removes or rewrites no `Upload-Complete`, `Upload-Incomplete`,
/// `Upload-Offset`, `Upload-Length` or `Upload-Draft-Interop-Version` field, implements no
/// `urlSession(_:task:needNewBodyStreamFrom:completionHandler:)` (bodies are produced from
/// their start only) and uses no resume data; Apple documents no way to turn URLSession's
/// own resumption off. FormPost's resumable uploaders (`ResumableUploader` for the draft,
/// `TusUploader` for tus) default to the AsyncHTTPClient transport (their client's
/// default), which sends their exchanges exactly as built: keep `ResumableUploader` on
/// it, since with this transport URLSession's resumption could run beside its own (as
/// Apple documents it in "Pausing and resuming uploads" and
/// `urlSession(_:task:needNewBodyStreamFrom:completionHandler:)`; no test runs on a device).
public final class URLSessionTransport: NSObject, UploadTransport, URLSessionDataDelegate, @unchecked Sendable {
    struct Exchange {
        var body: RequestBody?
        var bodyFile: BodyFile?
        /// The streamed body URLSession was last given, with the record of its failure.
        var streamedBody: StreamedUploadBody?
        var progress: ProgressReporter
        var data = Data()
        var response: HTTPURLResponse?
        var sentSoFar: Int64 = 0
        var continuation: CheckedContinuation<UploadResponse, any Error>
        var maxResponseBytes: Int
        var responseTooLarge = false
        /// Whether the caller's task was cancelled.
        var cancelled = false
        var url: URL
        var method: RequestMethod
    }

    /// An exchange's key: its task, in its session (the two sessions of a background
    /// transport number their tasks each from 1).
    struct ExchangeKey: Hashable {
        let session: ObjectIdentifier
        let task: Int

        init(_ session: URLSession, _ task: URLSessionTask) {
            self.session = ObjectIdentifier(session)
            self.task = task.taskIdentifier
        }
    }

    /// A request's body as its task takes it.
    enum Payload {
        /// The body's file, named in its task's description when it is a background
        /// transport's temporary file (`taskDescription`).
        case file(BodyFile, taskDescription: String?)
        case data(Data)
        case streamed
        case none
    }

    /// The session made on the transport's configuration.
    private(set) var session: URLSession!
    /// The ordinary session beside a background one, for requests without a body.
    var companion: URLSession?
    let exchanges = Mutex<[ExchangeKey: Exchange]>([:])
    let inMemoryLimit: Int64
    /// Whether every body is uploaded from a file.
    public let uploadsFromFile: Bool
    /// Whether the session is a background one (its configuration has an identifier).
    let isBackground: Bool
    /// A background transport's body files and finished uploads without a caller.
    let background: BackgroundSessionState?
    /// The sweep of body files no task needs any more, started when a background transport
    /// is made: the names it removed.
    private(set) var bodyFileSweep: Task<[String], Never>?

    /// Answers an authentication challenge: server trust (custom roots or pinning, on Apple
    /// platforms), a client certificate, HTTP authentication.
    public typealias ChallengeHandler = @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?)
    let challengeHandler: ChallengeHandler?

    /// Creates a transport with its own session on `configuration` (timeouts, proxies in
    /// `connectionProxyDictionary`, TLS versions, cookies and caches as URLSession has them).
    /// `challengeHandler` answers authentication challenges, session-wide and per task;
    /// without one URLSession's default handling applies (the system's trust store).
    /// FoundationNetworking on Linux verifies servers against the system's trust store only.
    /// A background configuration makes a background transport, as `background(identifier:)`
    /// does, but not the one of its identifier that `background(identifier:)` returns: make
    /// one transport per identifier in a process.
    public convenience init(configuration: URLSessionConfiguration = .default, inMemoryLimit: Int64 = 10_000_000, uploadsFromFile: Bool = false,
                            challengeHandler: ChallengeHandler? = nil) {
        self.init(configuration: configuration, inMemoryLimit: inMemoryLimit, uploadsFromFile: uploadsFromFile, challengeHandler: challengeHandler,
                  isBackground: configuration.identifier != nil)
    }

    /// Creates a transport routed as a background one when `isBackground` (every body from
    /// a file in `bodyDirectory`, by default its identifier's directory; bodiless requests
    /// through a companion session; finished uploads without a caller delivered), whatever
    /// `configuration` is: the public initializer passes whether the configuration has an
    /// identifier; tests on Linux, which has no background sessions, route an ordinary one so.
    init(configuration: URLSessionConfiguration, inMemoryLimit: Int64, uploadsFromFile: Bool, challengeHandler: ChallengeHandler?, isBackground: Bool,
         bodyDirectory: BackgroundBodyDirectory? = nil) {
        self.isBackground = isBackground
        self.inMemoryLimit = inMemoryLimit
        self.uploadsFromFile = uploadsFromFile || isBackground
        self.challengeHandler = challengeHandler
        background = isBackground
            ? BackgroundSessionState(directory: bodyDirectory ?? BackgroundBodyDirectory(identifier: configuration.identifier ?? ""),
                                     maxResponseBytes: UploadOptions().maxResponseBytes)
            : nil
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        if isBackground {
            companion = URLSession(configuration: Self.companionConfiguration(for: configuration), delegate: self, delegateQueue: queue)
            bodyFileSweep = Task { await self.sweepBodyFiles() }
        }
    }

    #if canImport(Darwin)
    /// A transport on a background session (uploads continue while the app is suspended),
    /// which always uploads from files. FoundationNetworking has no background sessions;
    /// `uploadsFromFile: true` gives the same uploads there.
    ///
    /// The system follows redirects itself, never asking this transport: `FormPostClient`'s
    /// redirect handling does not apply — `maxRedirects` (even 0) and
    /// `keepsCredentialsAcrossOrigins` have no effect, the body is not re-sent from the plan
    /// on 307/308, and `RedirectRule` does not drop `Authorization`, `Cookie` and
    /// `Proxy-Authorization` on a redirect to another origin. Requests without a body go
    /// through an ordinary companion session (background sessions run data tasks only while
    /// the app is not suspended), which ``invalidate()`` ends too.
    ///
    /// Every call with the same identifier returns the same transport (made at the first
    /// call), as a process may have only one session per identifier: call it at launch and in
    /// the app delegate's `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// alike. The session re-attaches to the uploads the system kept for the identifier;
    /// those that finished while no caller waited come through ``finishedUploads``.
    /// Temporary body files go in `bodyDirectory` (by the first call's; by default
    /// `FormPost-background-uploads/IDENTIFIER` in the caches directory — give a directory in
    /// the app group's container when an app extension shares the session).
    public static func background(identifier: String, bodyDirectory: URL? = nil) -> URLSessionTransport {
        BackgroundTransportRegistry.transport(identifier: identifier) {
            URLSessionTransport(configuration: .background(withIdentifier: identifier), inMemoryLimit: 10_000_000, uploadsFromFile: true,
                                challengeHandler: nil, isBackground: true,
                                bodyDirectory: bodyDirectory.map { BackgroundBodyDirectory(path: $0.path) })
        }
    }
    #endif

    /// The uploads of this background transport's session that finished with no caller
    /// waiting — while the app was not running, or started by an earlier run of the app —
    /// in the order they finished. Iterate it from launch for as long as the transport lives:
    /// the system's completion handler for the session's events is called only once every
    /// result delivered before those events finished was handled. Empty (it ends at once)
    /// for an ordinary transport.
    public var finishedUploads: FinishedBackgroundUploads {
        FinishedBackgroundUploads(state: background)
    }

    /// Takes the completion handler the system gave the app delegate's
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)` for this
    /// transport's session, and calls it on the main actor once the session has delivered
    /// its events and every result delivered by then was handled (see ``finishedUploads``),
    /// as the system asks. An ordinary transport calls it at once.
    @MainActor public func handleEventsForBackgroundURLSession(completionHandler: @escaping () -> Void) {
        guard let background else { return completionHandler() }
        background.handEvents(completionHandler: completionHandler)
    }

    /// Removes the body files of the session's directory that no task of the session and no
    /// request of this transport uses any more; their names.
    func sweepBodyFiles() async -> [String] {
        guard let background else { return [] }
        let descriptions = await withCheckedContinuation { continuation in
            session.getAllTasks { tasks in continuation.resume(returning: tasks.map(\.taskDescription)) }
        }
        return background.sweep(liveTaskDescriptions: descriptions)
    }

    /// The session finished delivering the events it had for the app: the system's
    /// completion handlers may be called.
    func sessionEventsFinished() {
        background?.eventsFinished()
    }

    /// The configuration of the companion session of a background transport: `.default`,
    /// with `background`'s additional header fields, cookie and credential storage, proxies
    /// and request timeout.
    static func companionConfiguration(for background: URLSessionConfiguration) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.httpAdditionalHeaders = background.httpAdditionalHeaders
        configuration.httpCookieStorage = background.httpCookieStorage
        configuration.urlCredentialStorage = background.urlCredentialStorage
        configuration.connectionProxyDictionary = background.connectionProxyDictionary
        configuration.timeoutIntervalForRequest = background.timeoutIntervalForRequest
        return configuration
    }

    /// Whether bodiless requests go through a companion session (a background transport).
    var hasCompanionSession: Bool { companion != nil }

    /// Ends the session, and the companion session of a background transport (cancelling
    /// their tasks); `background(identifier:)` then makes a new transport.
    public func invalidate() {
        BackgroundTransportRegistry.forget(self)
        let session: URLSession = self.session
        let companion: URLSession? = self.companion
        SessionQueueCall.run {
            session.invalidateAndCancel()
            companion?.invalidateAndCancel()
        }
    }

    public func send(_ request: TransportRequest) async throws -> UploadResponse {
        try Task.checkCancellation()
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw UploadError.invalidURL(request.url.absoluteString)
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        if let timeout = request.timeout { urlRequest.timeoutInterval = timeout.inSeconds }
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        let route = URLSessionTaskRoute.choose(hasBody: request.body != nil, bodyLength: request.body?.contentLength, inMemoryLimit: inMemoryLimit,
                                               uploadsFromFile: uploadsFromFile, isBackground: isBackground)
        var payload = Payload.none
        if let body = request.body {
            urlRequest.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
            switch route.kind {
            case .uploadFromFile:
                payload = try await fileBody(body.plan)
            case .uploadFromData:
                let data = try await body.plan.encodedData()
                urlRequest.setValue(String(data.count), forHTTPHeaderField: "Content-Length")
                payload = .data(data)
            case .uploadStreamed, .bodiless:
                // (A request with a body is never routed bodiless.) The stream itself comes
                // from needNewBodyStream, on every platform.
                payload = .streamed
                #if !canImport(FoundationNetworking)
                if let length = body.contentLength { urlRequest.setValue(String(length), forHTTPHeaderField: "Content-Length") }
                #endif
                // FoundationNetworking always sends a stream body chunked, and would send a
                // Content-Length beside it (a malformed request servers rightly refuse).
            }
        }
        let urlSession: URLSession = route.session == .companion ? (companion ?? session) : session
        request.progress.restart()
        let started = Mutex<(key: ExchangeKey, task: URLSessionTask)?>(nil)
        return try await withTaskCancellationHandler {
            // Making a task waits for the session's queue, which a streamed body's reader may
            // hold while it awaits a stream part's bytes: made on the blocking-I/O executor's
            // threads, never the Swift concurrency pool's few (which that read may need).
            try await BlockingIOExecutor.run { try await withCheckedThrowingContinuation { continuation in
                let task: URLSessionTask
                var bodyFile: BodyFile?
                switch payload {
                case .file(let file, let taskDescription):
                    bodyFile = file
                    task = urlSession.uploadTask(with: urlRequest, fromFile: URL(fileURLWithPath: file.path))
                    task.taskDescription = taskDescription
                case .data(let data):
                    task = urlSession.uploadTask(with: urlRequest, from: data)
                case .streamed:
                    task = urlSession.uploadTask(withStreamedRequest: urlRequest)
                case .none:
                    task = urlSession.dataTask(with: urlRequest)
                }
                let key = ExchangeKey(urlSession, task)
                exchanges.withLock {
                    $0[key] = Exchange(body: request.body, bodyFile: bodyFile, progress: request.progress, continuation: continuation,
                                       maxResponseBytes: request.maxResponseBytes, url: request.url, method: request.method)
                }
                started.withLock { $0 = (key, task) }
                // A cancellation that came before the task existed found nothing to cancel.
                if Task.isCancelled { cancel(task, key: key) }
                task.resume()
            } }
        } onCancel: {
            started.withLock { started in
                if let started { self.cancel(started.task, key: started.key) }
            }
        }
    }

    /// A body as one file: a background transport's temporary file goes in its session's
    /// directory, reserved until its task completes and named in the task's description.
    func fileBody(_ plan: BodyPlan) async throws -> Payload {
        guard let background else {
            return .file(try await BodyFile(plan: plan, temporaryPath: NSTemporaryDirectory() + "formpost-\(UUID().uuidString).body"), taskDescription: nil)
        }
        let name = background.reserveBodyFile()
        let file: BodyFile
        do {
            file = try await BodyFile(plan: plan, temporaryPath: background.directory.path(of: name))
        } catch {
            background.releaseBodyFile(name)
            throw error
        }
        guard file.isTemporary else {
            background.releaseBodyFile(name)
            return .file(file, taskDescription: nil)
        }
        return .file(file, taskDescription: BackgroundSessionLedger<Never>.taskDescription(bodyFile: name))
    }

    /// Cancels an exchange: its streamed body stops first — on Linux a read waiting for a
    /// stream part holds URLSession's queue, which `cancel()` waits for — then the task.
    func cancel(_ task: URLSessionTask, key: ExchangeKey) {
        let body = exchanges.withLock { exchanges -> StreamedUploadBody? in
            exchanges[key]?.cancelled = true
            return exchanges[key]?.streamedBody
        }
        body?.stop()
        SessionQueueCall.run { task.cancel() }
    }

    /// An answer's header fields.
    static func fields(_ response: HTTPURLResponse) -> HTTPFields {
        HTTPFields(response.allHeaderFields.compactMap { key, value -> HTTPField? in
            guard let name = (key as? String).flatMap({ HTTPField.Name($0) }) else { return nil }
            return HTTPField(name: name, value: String(describing: value))
        })
    }

    /// A request's header fields.
    static func fields(_ fields: [String: String]) -> HTTPFields {
        HTTPFields(fields.compactMap { name, value in HTTPField.Name(name).map { HTTPField(name: $0, value: value) } })
    }

    /// The error a failed task ends its exchange with: the body's own failure first
    /// (URLSession reports a body that could not be produced only as a failed or cancelled
    /// task), then the caller's cancellation, then URLSession's error translated.
    static func completionError(_ error: any Error, bodyFailure: (any Error)?, cancelled: Bool, url: URL) -> any Error {
        if let bodyFailure { return bodyFailure }
        if cancelled { return CancellationError() }
        return translate(error, url: url)
    }

    /// URLSession's error as an ``UploadError`` (or `CancellationError`).
    static func translate(_ error: any Error, url: URL) -> any Error {
        let host = url.host ?? ""
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        guard let urlError = error as? URLError else { return UploadError.transport(String(describing: error)) }
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut: return UploadError.timedOut("no complete answer from \(host) in time")
        case .cannotFindHost, .dnsLookupFailed: return UploadError.cannotResolve(host: host, reason: urlError.localizedDescription)
        case .cannotConnectToHost: return UploadError.cannotConnect(host: host, port: port, reason: urlError.localizedDescription)
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return UploadError.untrustedCertificate(host: host, reason: urlError.localizedDescription)
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return UploadError.tlsHandshakeFailed(host: host, reason: urlError.localizedDescription)
        case .unknown where urlError.localizedDescription.hasPrefix("SSL certificate problem"):
            // FoundationNetworking reports libcurl's failed verification with no code of its
            // own, only libcurl's message.
            return UploadError.untrustedCertificate(host: host, reason: urlError.localizedDescription)
        default: return UploadError.transport(urlError.localizedDescription)
        }
    }
}
