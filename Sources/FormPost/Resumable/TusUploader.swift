import Foundation
import HTTPTypes
import Multipart

/// Uploads a file with tus 1.0 (core protocol and creation): a cut connection, a timeout or
/// a 5xx never means starting over. After a failed request it asks the server for the
/// offset (`HEAD`) and goes on from there, backing off as ``retry`` says; when a retry
/// gained nothing (a server that keeps nothing of a cut request) the next requests are
/// halved, down to 1 MiB. The upload URL is kept in ``stateStore``, so that running the
/// same upload again after a crash resumes it; a stale entry (404 or 410) starts anew.
///
///     let result = try await TusUploader().upload(fileAt: "big.iso", to: URL(string: "https://example.com/files")!)
///     print(result.uploadURL, result.resumedFrom, result.bytesSent)
///
/// A file that changes (size or modification time) since the upload began is an error,
/// never a mixed upload. Each request's body is the file's next range, read from its
/// place: nothing already sent is read again.
public struct TusUploader: Sendable {
    /// The client that sends every request (its transport, TLS, proxy and headers).
    public var client: FormPostClient
    /// The largest body of one request (`PATCH`).
    public var chunkSize: Int64
    /// How many failed requests in a row are retried, and how long to wait between them.
    public var retry: RetryPolicy
    /// Where upload URLs are kept between runs; nil keeps none.
    public var stateStore: ResumeStateStore?
    /// The options of each request: rate limit, time limit, … (its retry policy is not
    /// used: ``retry`` governs).
    public var options: UploadOptions

    /// The smallest request a stalled upload is cut down to.
    public static let minimumChunkSize: Int64 = 1 << 20
    /// The protocol version spoken.
    public static let version = "1.0.0"

    /// An uploader; by default 64 MiB per request, 5 retries in a row, and the user's store.
    public init(client: FormPostClient = FormPostClient(), chunkSize: Int64 = 64 << 20, retry: RetryPolicy = RetryPolicy(maxRetries: 5),
                stateStore: ResumeStateStore? = .standard, options: UploadOptions = UploadOptions()) {
        self.client = client
        var options = options
        options.retry = .none
        self.options = options
        self.chunkSize = max(chunkSize, 1)
        self.retry = retry
        self.stateStore = stateStore
    }

    /// Uploads the file at `path` to the tus creation endpoint `endpoint`, or goes on with
    /// an upload of it begun before. `metadata` goes in `Upload-Metadata` (`filename` and
    /// `filetype` are added from the path unless given); `headers` go with every request.
    ///
    /// - Throws: ``ResumableUploadError``, or the file's errors when it cannot be read.
    public func upload(fileAt path: String, to endpoint: URL, metadata: [String: String] = [:], headers: HTTPFields = [:],
                       progress: (@Sendable (ResumableProgress) -> Void)? = nil) async throws -> ResumableUploadResult {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let plan = try RequestBody.file(path: absolute).plan
        let length = plan.contentLength ?? 0
        let modified = ((try? FileManager.default.attributesOfItem(atPath: absolute))?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        var fullMetadata = metadata
        fullMetadata["filename"] = fullMetadata["filename"] ?? (absolute as NSString).lastPathComponent
        fullMetadata["filetype"] = fullMetadata["filetype"] ?? MIMEType.forFilename(absolute)
        var run = TusRun(uploader: self, plan: plan, length: length, headers: headers, progress: progress,
                         entry: ResumeEntry(uploadURL: "", path: absolute, size: length, modified: modified,
                                            endpoint: endpoint.absoluteString, protocolName: "tus"))
        return try await run.perform(endpoint: endpoint, metadata: fullMetadata)
    }
}

/// One run of ``TusUploader/upload(fileAt:to:metadata:headers:progress:)``: its offset,
/// request size and failures in a row.
private struct TusRun {
    let uploader: TusUploader
    let plan: BodyPlan
    let length: Int64
    let headers: HTTPFields
    let progress: (@Sendable (ResumableProgress) -> Void)?
    var entry: ResumeEntry
    var chunkSize: Int64 = 0
    var failures = 0
    var resumedFrom: Int64 = 0

    init(uploader: TusUploader, plan: BodyPlan, length: Int64, headers: HTTPFields, progress: (@Sendable (ResumableProgress) -> Void)?, entry: ResumeEntry) {
        self.uploader = uploader
        self.plan = plan
        self.length = length
        self.headers = headers
        self.progress = progress
        self.entry = entry
        self.chunkSize = uploader.chunkSize
    }

    mutating func perform(endpoint: URL, metadata: [String: String]) async throws -> ResumableUploadResult {
        var (url, offset, last) = try await resumeOrCreate(endpoint: endpoint, metadata: metadata)
        resumedFrom = offset
        report(acknowledged: offset, sent: offset)
        while offset < length {
            let end = min(offset + chunkSize, length)
            do {
                last = try await append(url, range: offset..<end)
                guard last.status == 204 || last.status == 200,
                      let reached = last.headers[.uploadOffset].flatMap(Int64.init), reached > offset, reached <= length else {
                    try check(last, during: "an append at \(offset)", url: url)
                    try await failed("the server answered \(last.status) to an append at \(offset)", url: url, offset: &offset)
                    continue
                }
                offset = reached
                failures = 0
                report(acknowledged: offset, sent: offset)
            } catch let error as MultipartError {
                throw ResumableUploadError.fileChanged(path: entry.path, reason: error.description)
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try await failed(String(describing: error), url: url, offset: &offset)
            }
        }
        uploader.stateStore?.remove(matching: entry)
        return ResumableUploadResult(uploadURL: url, resumedFrom: resumedFrom, bytesSent: length - resumedFrom, response: last)
    }

    /// The upload kept from an earlier run, with the server's offset, or a new one.
    private mutating func resumeOrCreate(endpoint: URL, metadata: [String: String]) async throws -> (URL, Int64, UploadResponse) {
        if let kept = uploader.stateStore?.load(matching: entry), let url = URL(string: kept.uploadURL) {
            while true {
                do {
                    let head = try await request(.head, url)
                    if head.status == 404 || head.status == 410 || head.status == 403 {
                        uploader.stateStore?.remove(matching: entry)
                        break
                    }
                    try check(head, during: "HEAD of the kept upload", url: url)
                    if head.status == 200, let offset = head.headers[.uploadOffset].flatMap(Int64.init), offset <= length {
                        entry.uploadURL = kept.uploadURL
                        return (url, offset, head)
                    }
                    try await backOff("the server answered \(head.status) to HEAD")
                } catch let error as ResumableUploadError {
                    throw error
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    try await backOff(String(describing: error))
                }
            }
        }
        while true {
            do {
                var fields: HTTPFields = [.uploadLength: String(length)]
                fields[.uploadMetadata] = metadata.sorted { $0.key < $1.key }
                    .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
                let created = try await request(.post, endpoint, fields: fields)
                try check(created, during: "the creation of an upload", url: endpoint)
                guard created.status == 201, let location = created.headers[.location],
                      let url = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
                    try await backOff("the server answered \(created.status) without a Location to the creation of an upload")
                    continue
                }
                entry.uploadURL = url.absoluteString
                try? uploader.stateStore?.save(entry)
                return (url, 0, created)
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try await backOff(String(describing: error))
            }
        }
    }

    /// Sends the file's bytes `range` at its offset.
    private func append(_ url: URL, range: Range<Int64>) async throws -> UploadResponse {
        let body = RequestBody(plan: try plan.slice(range), contentType: "application/offset+octet-stream")
        var fields = headers
        fields[.tusResumable] = TusUploader.version
        fields[.uploadOffset] = String(range.lowerBound)
        let start = range.lowerBound
        let report = progress.map { handler in
            { @Sendable (sent: UploadProgress) in
                handler(ResumableProgress(acknowledged: start, sent: start + sent.bytesSent, total: length, resumedFrom: resumedFrom))
            }
        }
        return try await uploader.client.send(body, to: url, method: RequestMethod(rawValue: "PATCH"), headers: fields, options: uploader.options, progress: report)
    }

    /// After a failed append: waits, asks the server for the offset, and halves the
    /// requests when the failure gained nothing.
    private mutating func failed(_ reason: String, url: URL, offset: inout Int64) async throws {
        while true {
            try await backOff(reason)
            do {
                let head = try await request(.head, url)
                try check(head, during: "HEAD after a failed append", url: url)
                guard head.status == 200, let reached = head.headers[.uploadOffset].flatMap(Int64.init), reached <= length else { continue }
                if reached <= offset { chunkSize = max(chunkSize / 2, TusUploader.minimumChunkSize) }
                offset = reached
                report(acknowledged: offset, sent: offset)
                return
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                continue
            }
        }
    }

    /// Counts a failure, and waits as the retry policy says, or throws when it allows no more.
    private mutating func backOff(_ reason: String) async throws {
        failures += 1
        guard let delay = uploader.retry.delay(attempt: failures, status: nil, retryAfter: nil) else {
            throw ResumableUploadError.retriesExhausted(attempts: failures, lastError: reason)
        }
        try await Task.sleep(for: delay)
    }

    /// Throws for answers no retry can mend: 412, a gone upload, other 4xx than 409 and 423.
    private func check(_ response: UploadResponse, during what: String, url: URL) throws {
        switch response.status {
        case 412:
            throw ResumableUploadError.protocolUnsupported(status: 412, detail: "it speaks tus \(response.headers[.tusVersion] ?? "of another version")")
        case 404, 410:
            uploader.stateStore?.remove(matching: entry)
            throw ResumableUploadError.uploadGone(url: url.absoluteString)
        case 400..<500 where response.status != 409 && response.status != 423 && response.status != 429 && response.status != 408:
            throw ResumableUploadError.unexpectedStatus(response.status, during: what, bodyPrefix: response.bodyPrefix)
        default:
            return
        }
    }

    private func request(_ method: RequestMethod, _ url: URL, fields: HTTPFields = [:]) async throws -> UploadResponse {
        var all = headers
        all.append(contentsOf: fields)
        all[.tusResumable] = TusUploader.version
        return try await uploader.client.send(nil, to: url, method: method, headers: all, options: uploader.options)
    }

    private func report(acknowledged: Int64, sent: Int64) {
        progress?(ResumableProgress(acknowledged: acknowledged, sent: sent, total: length, resumedFrom: resumedFrom))
    }
}

extension HTTPField.Name {
    static let tusResumable = Self("Tus-Resumable")!
    static let tusVersion = Self("Tus-Version")!
    static let uploadOffset = Self("Upload-Offset")!
    static let uploadLength = Self("Upload-Length")!
    static let uploadMetadata = Self("Upload-Metadata")!
}
