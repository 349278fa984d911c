import Foundation
import HTTPTypes
import Multipart

/// Uploads a file with tus 1.0 (core protocol and creation): a cut connection, a timeout or
/// a 5xx never means starting over. After a failed request it asks the server for the
/// offset (`HEAD`) and goes on from there, backing off as ``retry`` says; when a retry
/// gained nothing (a server that keeps nothing of a cut request) the next requests are
/// halved, down to 1 MiB. A 409 or 423 (the server still finishing an append, of a run
/// that was killed say) is waited out for up to 30 s without counting as a failure. The
/// upload URL is kept in ``stateStore``, so that running the
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
        let run = TusRun(uploader: self, plan: plan, length: length, headers: headers, progress: progress,
                         entry: ResumeEntry(uploadURL: "", path: absolute, size: length, modified: modified,
                                            endpoint: endpoint.absoluteString, protocolName: "tus"))
        return try await run.perform(endpoint: endpoint, metadata: fullMetadata)
    }
}

extension HTTPField.Name {
    static let tusResumable = Self("Tus-Resumable")!
    static let tusVersion = Self("Tus-Version")!
    static let uploadOffset = Self("Upload-Offset")!
    static let uploadLength = Self("Upload-Length")!
    static let uploadMetadata = Self("Upload-Metadata")!
}
