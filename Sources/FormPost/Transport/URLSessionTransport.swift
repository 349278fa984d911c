import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A transport on URLSession (FoundationNetworking on Linux, native on Apple platforms).
///
/// Bodies of known length up to `inMemoryLimit` are sent as data; larger ones stream
/// from the plan through an `InputStream`, and URLSession's `needNewBodyStream` gets a
/// fresh one. On Linux FoundationNetworking sends stream bodies chunked, so they go
/// without `Content-Length` there. Progress comes from `didSendBodyData`. Redirects are returned to
/// ``FormPostClient``, which decides whether the body is sent again.
///
/// With `uploadsFromFile` (always so for ``background(identifier:)``), every body is sent
/// with `uploadTask(with:fromFile:)`, as background sessions require and Alamofire does: a
/// raw file body from its own file, anything else encoded to a temporary file first, which
/// is removed when the exchange ends (answered, failed or cancelled).
public final class URLSessionTransport: NSObject, UploadTransport, URLSessionDataDelegate, @unchecked Sendable {
    private struct Exchange {
        var body: RequestBody?
        var bodyFile: BodyFile?
        var progress: ProgressReporter
        var data = Data()
        var response: HTTPURLResponse?
        var sentSoFar: Int64 = 0
        var continuation: CheckedContinuation<UploadResponse, any Error>
        var maxResponseBytes: Int
        var responseTooLarge = false
        var url: URL
        var method: RequestMethod
    }

    private var session: URLSession!
    private let exchanges = Mutex<[Int: Exchange]>([:])
    private let inMemoryLimit: Int64
    /// Whether every body is uploaded from a file.
    public let uploadsFromFile: Bool

    /// Answers an authentication challenge: server trust (custom roots or pinning, on Apple
    /// platforms), a client certificate, HTTP authentication.
    public typealias ChallengeHandler = @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?)
    private let challengeHandler: ChallengeHandler?

    /// Creates a transport with its own session on `configuration` (timeouts, proxies in
    /// `connectionProxyDictionary`, TLS versions, cookies and caches as URLSession has them).
    /// `challengeHandler` answers authentication challenges, session-wide and per task;
    /// without one URLSession's default handling applies (the system's trust store).
    /// FoundationNetworking on Linux verifies servers against the system's trust store only.
    public init(configuration: URLSessionConfiguration = .default, inMemoryLimit: Int64 = 10_000_000, uploadsFromFile: Bool = false,
                challengeHandler: ChallengeHandler? = nil) {
        self.inMemoryLimit = inMemoryLimit
        self.uploadsFromFile = uploadsFromFile
        self.challengeHandler = challengeHandler
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    #if canImport(Darwin)
    /// A transport on a background session (uploads continue while the app is suspended),
    /// which always uploads from files. FoundationNetworking has no background sessions;
    /// `uploadsFromFile: true` gives the same uploads there.
    public static func background(identifier: String) -> URLSessionTransport {
        URLSessionTransport(configuration: .background(withIdentifier: identifier), uploadsFromFile: true)
    }
    #endif

    /// Ends the session.
    public func invalidate() { session.invalidateAndCancel() }

    public func send(_ request: TransportRequest) async throws -> UploadResponse {
        try Task.checkCancellation()
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw UploadError.invalidURL(request.url.absoluteString)
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        if let timeout = request.timeout { urlRequest.timeoutInterval = timeout.inSeconds }
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        var bodyData: Data?
        var bodyFile: BodyFile?
        if let body = request.body {
            urlRequest.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
            if uploadsFromFile {
                bodyFile = try await BodyFile(plan: body.plan)
            } else if let length = body.contentLength, length <= inMemoryLimit {
                bodyData = try await body.plan.encodedData()
                urlRequest.setValue(String(length), forHTTPHeaderField: "Content-Length")
            } else {
                urlRequest.httpBodyStream = PlanInputStream(plan: body.plan)
                #if !canImport(FoundationNetworking)
                if let length = body.contentLength { urlRequest.setValue(String(length), forHTTPHeaderField: "Content-Length") }
                #endif
                // FoundationNetworking always sends a stream body chunked, and would send a
                // Content-Length beside it (a malformed request servers rightly refuse).
            }
        }
        request.progress.restart()
        let cancelled = Mutex<URLSessionTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task: URLSessionTask
                if let bodyFile {
                    task = session.uploadTask(with: urlRequest, fromFile: URL(fileURLWithPath: bodyFile.path))
                } else if let bodyData {
                    task = session.uploadTask(with: urlRequest, from: bodyData)
                } else if urlRequest.httpBodyStream != nil {
                    task = session.uploadTask(withStreamedRequest: urlRequest)
                } else {
                    task = session.dataTask(with: urlRequest)
                }
                exchanges.withLock {
                    $0[task.taskIdentifier] = Exchange(body: request.body, bodyFile: bodyFile, progress: request.progress, continuation: continuation, maxResponseBytes: request.maxResponseBytes, url: request.url, method: request.method)
                }
                cancelled.withLock { $0 = task }
                // A cancellation that came before the task existed found nothing to cancel.
                if Task.isCancelled { task.cancel() }
                task.resume()
            }
        } onCancel: {
            cancelled.withLock { $0?.cancel() }
        }
    }

    // MARK: - Delegate

    public func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        let plan = exchanges.withLock { $0[task.taskIdentifier]?.body?.plan }
        exchanges.withLock { exchanges in
            guard var exchange = exchanges[task.taskIdentifier] else { return }
            exchange.progress.restart()
            exchange.sentSoFar = 0
            exchanges[task.taskIdentifier] = exchange
        }
        completionHandler(plan.map { PlanInputStream(plan: $0) })
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        let progress: (ProgressReporter, Int64)? = exchanges.withLock { exchanges in
            guard var exchange = exchanges[task.taskIdentifier] else { return nil }
            let delta = totalBytesSent - exchange.sentSoFar
            exchange.sentSoFar = totalBytesSent
            exchanges[task.taskIdentifier] = exchange
            return (exchange.progress, delta)
        }
        if let (reporter, delta) = progress, delta > 0 { reporter.add(Int(delta)) }
    }

    public func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let (disposition, credential) = challengeHandler?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let (disposition, credential) = challengeHandler?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        exchanges.withLock { $0[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[dataTask.taskIdentifier] else { return false }
            guard exchange.data.count + data.count <= exchange.maxResponseBytes else {
                exchange.responseTooLarge = true
                exchanges[dataTask.taskIdentifier] = exchange
                return true
            }
            exchange.data.append(data)
            exchanges[dataTask.taskIdentifier] = exchange
            return false
        }
        // Nothing is kept past the limit, and nothing more is read.
        if tooLarge { dataTask.cancel() }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        exchange.bodyFile?.remove()
        if exchange.responseTooLarge {
            exchange.continuation.resume(throwing: UploadError.responseTooLarge(limit: exchange.maxResponseBytes))
            return
        }
        if let error {
            exchange.continuation.resume(throwing: Self.translate(error, stream: task.originalRequest?.httpBodyStream, url: exchange.url))
            return
        }
        guard let response = exchange.response ?? task.response as? HTTPURLResponse else {
            exchange.continuation.resume(throwing: UploadError.transport("no HTTP response"))
            return
        }
        let headers = HTTPFields(response.allHeaderFields.compactMap { key, value -> HTTPField? in
            guard let name = (key as? String).flatMap({ HTTPField.Name($0) }) else { return nil }
            return HTTPField(name: name, value: String(describing: value))
        })
        exchange.continuation.resume(returning: UploadResponse(status: response.statusCode, headers: headers, body: Array(exchange.data), url: exchange.url, method: exchange.method))
    }

    static func translate(_ error: any Error, stream: InputStream?, url: URL) -> any Error {
        if let failed = (stream as? PlanInputStream)?.streamError { return failed }
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
