import FormPost
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Multipart
import Synchronization

/// URLSession's delegate calls: bodies streamed from their plans, answers and progress.
extension URLSessionTransport {
    // MARK: - Delegate

    /// Gives URLSession a stream of the request's body, produced from its plan from the
    /// start, whenever it asks for one (again after an authentication challenge, say).
    public func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        let key = ExchangeKey(session, task)
        guard let plan = exchanges.withLock({ $0[key]?.body?.plan }) else {
            completionHandler(nil)
            return
        }
        // A failed body cancels its task (on Apple platforms), whose completion then reports the failure.
        let body = StreamedUploadBody(plan: plan) { [weak task] _ in task?.cancel() }
        let (previous, cancelled) = exchanges.withLock { exchanges -> (StreamedUploadBody?, Bool) in
            guard var exchange = exchanges[key] else { return (nil, true) }
            let previous = exchange.streamedBody
            exchange.streamedBody = body
            exchange.progress.restart()
            exchange.sentSoFar = 0
            exchanges[key] = exchange
            return (previous, exchange.cancelled)
        }
        // URLSession reads the previous stream no more.
        previous?.discard()
        completionHandler(body.stream)
        if cancelled { body.stop() } else { body.start() }
    }

    /// Counts the body bytes URLSession reports sent into the request's progress.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        let key = ExchangeKey(session, task)
        let progress: (ProgressReporter, Int64)? = exchanges.withLock { exchanges in
            guard var exchange = exchanges[key] else { return nil }
            let delta = totalBytesSent - exchange.sentSoFar
            exchange.sentSoFar = totalBytesSent
            exchanges[key] = exchange
            return (exchange.progress, delta)
        }
        if let (reporter, delta) = progress, delta > 0 { reporter.add(Int(delta)) }
    }

    /// Answers a session-level challenge (a server's trust) with the transport's challenge
    /// handler, or URLSession's default handling without one.
    public func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let (disposition, credential) = challengeHandler?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    /// Answers a task's challenge (HTTP authentication) as the session-level one.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let (disposition, credential) = challengeHandler?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    /// Returns the redirect to `FormPostClient` (never called for background sessions,
    /// which follow redirects themselves).
    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    /// Keeps the answer's head for the exchange and lets its body come.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let key = ExchangeKey(session, dataTask)
        exchanges.withLock { $0[key]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    /// Keeps the answer's bytes up to the request's `maxResponseBytes`; past them the task is
    /// cancelled and the exchange fails with `UploadError.responseTooLarge`.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let key = ExchangeKey(session, dataTask)
        let tooLarge = exchanges.withLock { exchanges -> Bool? in
            guard var exchange = exchanges[key] else { return nil }
            guard exchange.data.count + data.count <= exchange.maxResponseBytes else {
                exchange.responseTooLarge = true
                exchanges[key] = exchange
                return true
            }
            exchange.data.append(data)
            exchanges[key] = exchange
            return false
        }
        guard let tooLarge else {
            // A background session's task no caller waits for (started by an earlier run).
            if session === self.session { background?.orphanReceived(task: dataTask.taskIdentifier, bytes: data) }
            return
        }
        // Nothing is kept past the limit, and nothing more is read. A streamed body stops
        // first, as in cancel(_:key:): on Linux a read waiting for a stream part holds the
        // session's queue, which `cancel()` waits for (SessionQueueCall).
        if tooLarge {
            exchanges.withLock { $0[key]?.streamedBody }?.stop()
            SessionQueueCall.run { dataTask.cancel() }
        }
    }

    /// Ends the exchange: removes its temporary body file, and answers the response or the
    /// error (a body's own failure before URLSession's report of it). A background session's
    /// task no caller waits for gives its result to ``finishedUploads``.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: ExchangeKey(session, task)) }
        if let background, session === self.session {
            // Removes the body file its description names, and keeps the result of a task
            // without a caller.
            let url = task.originalRequest?.url ?? task.currentRequest?.url ?? URL(fileURLWithPath: "/")
            let request = (url: url, method: RequestMethod(rawValue: task.originalRequest?.httpMethod ?? "GET"),
                           headers: Self.fields(task.originalRequest?.allHTTPHeaderFields ?? [:]))
            let response = (task.response as? HTTPURLResponse).map { (status: $0.statusCode, headers: Self.fields($0)) }
            background.taskCompleted(task: task.taskIdentifier, description: task.taskDescription, hasCaller: exchange != nil, request: request,
                                     response: response, error: error.map { Self.translate($0, url: url) })
        } else {
            exchange?.bodyFile?.remove()
        }
        guard let exchange else { return }
        exchange.streamedBody?.discard()
        let bodyFailure = exchange.streamedBody?.failure.error
        if let error, let bodyFailure {
            exchange.continuation.resume(throwing: Self.completionError(error, bodyFailure: bodyFailure, cancelled: exchange.cancelled, url: exchange.url))
            return
        }
        // Checked whether or not the task failed: the cancellation may come after the whole answer.
        if exchange.responseTooLarge {
            exchange.continuation.resume(throwing: UploadError.responseTooLarge(limit: exchange.maxResponseBytes))
            return
        }
        if let error {
            exchange.continuation.resume(throwing: Self.completionError(error, bodyFailure: nil, cancelled: exchange.cancelled, url: exchange.url))
            return
        }
        guard let response = exchange.response ?? task.response as? HTTPURLResponse else {
            exchange.continuation.resume(throwing: UploadError.transport("no HTTP response"))
            return
        }
        exchange.continuation.resume(returning: UploadResponse(status: response.statusCode, headers: Self.fields(response), body: Array(exchange.data),
                                                               url: exchange.url, method: exchange.method))
    }

    #if canImport(Darwin)
    /// Calls the system's completion handler for the session's events, once the results
    /// delivered by then were handled (``handleEventsForBackgroundURLSession(completionHandler:)``).
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        sessionEventsFinished()
    }
    #endif
}
