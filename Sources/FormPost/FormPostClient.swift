#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// Uploads forms, files, bytes and streams over HTTP.
///
///     let client = FormPostClient()
///     var form = MultipartForm()
///     form.append(name: "title", value: "Holiday")
///     try form.append(name: "photo", fileAt: "/tmp/beach.jpg")
///     let response = try await client.upload(form, to: url) { progress in print(progress.fraction ?? 0) }
///     try response.validate()
///
/// Redirects follow browser semantics (307/308 re-send the body from the plan), retries
/// re-send it too, and the body is produced as its ``EncodingStrategy`` says. A request
/// whose reused connection the server closed before any byte of an answer (a pooled
/// connection it closed on its own keep-alive clock) is sent once more at once, as curl
/// does, and one that never reached an HTTP/2 server (a stream refused or dropped by a
/// GOAWAY) up to 3 times — unless its body has a stream part (which may be a one-shot
/// `InputStream`).
public struct FormPostClient: Sendable {
    /// The transport that performs each exchange.
    public let transport: any UploadTransport
    /// Builds every request this client makes: default header fields (`Accept-Language`,
    /// `User-Agent`), authorization, and where parameters go.
    public var requestSerializer: RequestSerializer

    #if os(watchOS)
    /// Creates a client on `transport`.
    ///
    /// FormPost has no default transport on watchOS: an ordinary watchOS app has no
    /// Network.framework or BSD-socket networking, which AsyncHTTPClient uses there — only
    /// URLSession (Apple TN3135). `import FormPostURLSession`, whose `FormPostClient()` uses
    /// `URLSessionTransport.shared`.
    public init(transport: any UploadTransport, requestSerializer: RequestSerializer = RequestSerializer()) {
        self.transport = transport
        self.requestSerializer = requestSerializer
    }
    #else
    /// Creates a client on `transport` (AsyncHTTPClient by default; on watchOS, where apps
    /// have URLSession only, FormPostURLSession's `FormPostClient()` uses URLSession).
    public init(transport: any UploadTransport = AsyncHTTPClientTransport.shared, requestSerializer: RequestSerializer = RequestSerializer()) {
        self.transport = transport
        self.requestSerializer = requestSerializer
    }
    #endif

    /// Uploads `form` to `url` with `method` (POST, PUT or PATCH).
    ///
    /// - Throws: ``UploadError/methodCannotCarryBody(_:)`` for GET and HEAD, any
    ///   `MultipartError` from the body, and transport errors as ``UploadError``.
    public func upload(
        _ form: MultipartForm, to url: URL, method: RequestMethod = .post, headers: HTTPFields = [:],
        strategy: EncodingStrategy = .default, options: UploadOptions = UploadOptions(),
        progress: (@Sendable (UploadProgress) -> Void)? = nil
    ) async throws -> UploadResponse {
        var request = try requestSerializer.multipartRequest(method, url, form: form, headers: headers)
        guard let plan = request.body?.plan else { return try await send(request, options: options, progress: progress) }
        switch resolve(strategy, length: plan.contentLength) {
        case .inMemory:
            // The form's bytes, framed by its own boundary (no other is drawn for them).
            let encoded = BodyPlan(boundary: plan.boundary, segments: [.bytes(try await plan.encodedBytes())])
            request.body = RequestBody(plan: encoded, contentType: plan.contentType)
            return try await send(request, options: options, progress: progress)
        case .temporaryFile:
            let path = FileManager.default.temporaryDirectory.path + "/formpost-\(UUID().uuidString).multipart"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try await plan.write(toFile: path)
            request.body = try RequestBody.file(path: path, contentType: plan.contentType)
            return try await send(request, options: options, progress: progress)
        case .streaming, .automatic:
            return try await send(request, options: options, progress: progress)
        }
    }

    /// Sends `body` (a form's, raw bytes, a file or a stream) — or none — to `url`,
    /// following redirects and retrying as `options` say.
    public func send(
        _ body: RequestBody?, to url: URL, method: RequestMethod = .post, headers: HTTPFields = [:],
        options: UploadOptions = UploadOptions(), progress: (@Sendable (UploadProgress) -> Void)? = nil
    ) async throws -> UploadResponse {
        try await send(requestSerializer.request(method, url, body: body, headers: headers), options: options, progress: progress)
    }

    /// Sends a request with `parameters` in its query (GET, HEAD, DELETE) or as its body
    /// (encoded as ``requestSerializer``'s ``RequestSerializer/parameterEncoding`` says).
    ///
    ///     let response = try await client.request(.get, url, parameters: ["q": "swift"])
    ///     let results = try response.serialized(by: .decodable(SearchResults.self))
    public func request(
        _ method: RequestMethod, _ url: URL, parameters: [String: FormValue]? = nil, headers: HTTPFields = [:],
        options: UploadOptions = UploadOptions(), progress: (@Sendable (UploadProgress) -> Void)? = nil
    ) async throws -> UploadResponse {
        try await send(requestSerializer.request(method, url, parameters: parameters, headers: headers), options: options, progress: progress)
    }

    /// Sends a request with an `Encodable` value as its parameters, as ``request(_:_:parameters:headers:options:progress:)``.
    public func request(
        _ method: RequestMethod, _ url: URL, encoding value: some Encodable, headers: HTTPFields = [:],
        options: UploadOptions = UploadOptions(), progress: (@Sendable (UploadProgress) -> Void)? = nil
    ) async throws -> UploadResponse {
        try await send(requestSerializer.request(method, url, encoding: value, headers: headers), options: options, progress: progress)
    }

    /// Sends `request` as it is, following redirects and retrying as `options` say.
    public func send(
        _ request: FormPostRequest, options: UploadOptions = UploadOptions(), progress: (@Sendable (UploadProgress) -> Void)? = nil
    ) async throws -> UploadResponse {
        try await send(request, options: options, resendsAfterClose: true, progress: progress)
    }

    /// ``send(_:options:progress:)`` for a resumable upload, which asks the server where it
    /// stands after a failure: with `resendsAfterClose` false, a request whose connection
    /// closed before any answer is not sent again whole.
    func send(
        _ request: FormPostRequest, options: UploadOptions, resendsAfterClose: Bool,
        progress: (@Sendable (UploadProgress) -> Void)?
    ) async throws -> UploadResponse {
        var request = TransportRequest(
            url: request.url, method: request.method, headers: request.headers, body: request.body,
            progress: ProgressReporter(total: request.body?.contentLength, handler: progress),
            maxBytesPerSecond: options.maxBytesPerSecond, timeout: options.timeout, maxResponseBytes: options.maxResponseBytes,
            marksClosedBeforeAnswer: resendsAfterClose
        )
        let clock = ContinuousClock()
        let deadline = options.timeout.map { clock.now + $0 }
        var attempt = 0
        var redirects = 0
        /// How many times this exchange was sent again after its connection closed, or its
        /// HTTP/2 stream was not taken, before any answer.
        var resentAfterClose = 0
        while true {
            if let deadline { request.timeout = max(.milliseconds(1), clock.now.duration(to: deadline)) }
            let response: UploadResponse
            do {
                response = try await transport.send(request)
            } catch let closed as ConnectionClosedBeforeAnswer where resendsAfterClose && resentAfterClose < closed.resends
                        && ConnectionClosedBeforeAnswer.mayResend(request.body) {
                // The keep-alive race (the server closed the pooled connection as the request
                // went out), or an HTTP/2 stream the server did not take. Sent again at once,
                // whatever the retry policy, as curl does.
                resentAfterClose += 1
                continue
            } catch {
                let error = (error as? ConnectionClosedBeforeAnswer)?.error ?? error
                attempt += 1
                guard case UploadError.cannotConnect = error, let delay = options.retry.delay(attempt: attempt, status: nil, retryAfter: nil) else { throw error }
                try await Task.sleep(for: delay)
                continue
            }
            resentAfterClose = 0
            if options.maxRedirects > 0,
               let next = RedirectRule.follow(status: response.status, method: request.method, location: response.headers[.location], from: request.url) {
                redirects += 1
                guard redirects <= options.maxRedirects else { throw UploadError.tooManyRedirects(options.maxRedirects) }
                request.headers = RedirectRule.headers(request.headers, from: request.url, to: next.url, trusted: options.keepsCredentialsAcrossOrigins)
                request.url = next.url
                request.method = next.method
                if !next.keepsBody {
                    request.body = nil
                    request.headers[.contentType] = nil
                }
                continue
            }
            if response.status == 503 || response.status == 429 {
                attempt += 1
                if let delay = options.retry.delay(attempt: attempt, status: response.status, retryAfter: response.headers[.retryAfter]) {
                    try await Task.sleep(for: delay)
                    continue
                }
            }
            request.progress.finish()
            return response
        }
    }

    /// Starts an upload whose progress is an `AsyncStream`, for callers that prefer a sequence
    /// to a closure. Cancel the returned task to abort the upload.
    public func uploadTask(
        _ form: MultipartForm, to url: URL, method: RequestMethod = .post, headers: HTTPFields = [:],
        strategy: EncodingStrategy = .default, options: UploadOptions = UploadOptions()
    ) -> (progress: AsyncStream<UploadProgress>, response: Task<UploadResponse, any Error>) {
        let (stream, continuation) = AsyncStream<UploadProgress>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let task = Task {
            defer { continuation.finish() }
            return try await upload(form, to: url, method: method, headers: headers, strategy: strategy, options: options) { continuation.yield($0) }
        }
        return (stream, task)
    }

    private func resolve(_ strategy: EncodingStrategy, length: Int64?) -> EncodingStrategy {
        guard case .automatic(let threshold) = strategy else { return strategy }
        if let length, length <= threshold { return .inMemory }
        return .streaming
    }
}
