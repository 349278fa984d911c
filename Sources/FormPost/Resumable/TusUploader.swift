#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// Uploads a file with tus 1.0 (core protocol, creation, checksum, termination): a cut
/// connection, a stalled request, a timeout or a 5xx never means starting over. After a
/// failed request it asks the server for the offset (`HEAD`) and goes on from there,
/// backing off as ``retry`` says; when a retry gained nothing (a server that keeps nothing
/// of a cut request) the next requests are halved, down to 1 MiB. A 409 or 423 (the server
/// still finishing an append, of a run that was killed say) is waited out for up to 30 s
/// without counting as a failure. The upload URL is kept in ``stateStore``, so that
/// running the same upload again after a crash resumes it; a stale entry (404 or 410)
/// starts anew.
///
///     let result = try await TusUploader().upload(fileAt: "big.iso", to: URL(string: "https://example.com/files")!)
///     print(result.uploadURL, result.resumedFrom, result.bytesSent)
///
/// The exchange, for `hi.txt` holding `hello`, sent in one request with `checksums` on:
///
///     OPTIONS /files                      → 204, Tus-Extension: creation,checksum, Tus-Checksum-Algorithm: sha1,sha256
///     POST /files                         → 201, Location: /files/24e5…
///       Tus-Resumable: 1.0.0
///       Upload-Length: 5
///       Upload-Metadata: filename aGkudHh0,filetype dGV4dC9wbGFpbg==
///     PATCH /files/24e5…                  → 204, Upload-Offset: 5
///       Content-Type: application/offset+octet-stream
///       Upload-Offset: 0
///       Upload-Checksum: sha256 LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=
///
/// A file that changes (size or modification time) since the upload began is an error,
/// never a mixed upload. Each request's body is the file's next range, read from its
/// place: nothing already sent is read again (but for its checksum, read just before).
public struct TusUploader: Sendable {
    /// The client that sends every request (its transport, TLS, proxy and headers).
    public var client: FormPostClient
    /// The largest body of one request (`PATCH`).
    public var chunkSize: Int64
    /// How many failed requests in a row are retried, and how long to wait between them.
    public var retry: RetryPolicy
    /// Where upload URLs are kept between runs; nil keeps none.
    public var stateStore: ResumeStateStore?
    /// Whether a completed upload leaves ``stateStore`` as soon as it is complete (the
    /// default). When false, its entry stays until ``forget(_:)``: a program killed after
    /// the upload completed but before it reported the answer finds the upload complete
    /// when it runs again, and gets the same answer, instead of uploading it anew.
    public var forgetsCompletedUploads = true
    /// The options of each request: rate limit, time limit, … (its retry policy is not
    /// used: ``retry`` governs).
    public var options: UploadOptions
    /// Whether appends carry a checksum when the server verifies one (tus's checksum
    /// extension): SHA-256 if offered, else SHA-1. A server that verifies it appends
    /// nothing of a request whose content does not match — nor of one that was cut. Off by
    /// default, as in tus's other clients: TCP and TLS already guard the bytes in transit,
    /// and each byte then costs two more SHA-256 passes, one here and one at the server
    /// (`formpost-bench resumable` measures it).
    public var checksums: Bool
    /// How many partial uploads one file is sent as at once (tus's concatenation), when the
    /// server offers it: the file's ranges in equal parts of at least 1 MiB, each resuming on
    /// its own, joined by the server once all are complete. Several TCP streams fill a long,
    /// fat link that one stream cannot. 1 (the default), a smaller file, or a server without
    /// concatenation: one upload. Each part is an upload in progress on the server, and the
    /// final one too: `formpost serve` allows 10 per client address unless told, so at most 9.
    public var parallelUploads = 1
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
    /// The smallest request a stalled upload is cut down to.
    public static let minimumChunkSize: Int64 = 1 << 20
    /// The protocol version spoken.
    public static let version = "1.0.0"

    #if os(watchOS)
    /// An uploader sending through `client`; by default 64 MiB per request,
    /// ``defaultRetries`` retries in a row, no checksums, 60 s without progress for a stalled
    /// request, five times that (300 s) for an answer once a request is sent, and the user's store.
    ///
    /// On watchOS FormPost has no default client (apps have URLSession only, Apple TN3135):
    /// pass FormPostURLSession's `FormPostClient()`, on `URLSessionTransport.shared`.
    public init(client: FormPostClient, chunkSize: Int64 = 64 << 20, retry: RetryPolicy = RetryPolicy(maxRetries: defaultRetries),
                stateStore: ResumeStateStore? = .standard, options: UploadOptions = UploadOptions(), checksums: Bool = false,
                stallTimeout: Duration = .seconds(60), answerTimeout: Duration? = nil) {
        self.init(sendingThrough: client, chunkSize: chunkSize, retry: retry, stateStore: stateStore, options: options, checksums: checksums,
                  stallTimeout: stallTimeout, answerTimeout: answerTimeout)
    }
    #else
    /// An uploader; by default 64 MiB per request, ``defaultRetries`` retries in a row, no
    /// checksums, 60 s without progress for a stalled request, five times that (300 s) for an
    /// answer once a request is sent, and the user's store.
    public init(client: FormPostClient = FormPostClient(), chunkSize: Int64 = 64 << 20, retry: RetryPolicy = RetryPolicy(maxRetries: defaultRetries),
                stateStore: ResumeStateStore? = .standard, options: UploadOptions = UploadOptions(), checksums: Bool = false,
                stallTimeout: Duration = .seconds(60), answerTimeout: Duration? = nil) {
        self.init(sendingThrough: client, chunkSize: chunkSize, retry: retry, stateStore: stateStore, options: options, checksums: checksums,
                  stallTimeout: stallTimeout, answerTimeout: answerTimeout)
    }
    #endif

    private init(sendingThrough client: FormPostClient, chunkSize: Int64, retry: RetryPolicy, stateStore: ResumeStateStore?,
                 options: UploadOptions, checksums: Bool, stallTimeout: Duration, answerTimeout: Duration?) {
        self.client = client
        var options = options
        options.retry = .none
        self.options = options
        self.chunkSize = max(chunkSize, 1)
        self.retry = retry
        self.stateStore = stateStore
        self.checksums = checksums
        self.stallTimeout = stallTimeout
        self.answerTimeout = answerTimeout ?? stallTimeout * 5
    }

    /// Uploads the file at `path` to the tus creation endpoint `endpoint`, or goes on with
    /// an upload of it begun before. `metadata` goes in `Upload-Metadata` (`filename` and
    /// `filetype` are added from the path unless given); `headers` go with every request.
    ///
    /// - Throws: ``ResumableUploadError``, or the file's errors when it cannot be read.
    public func upload(fileAt path: String, to endpoint: URL, metadata: [String: String] = [:], headers: HTTPFields = [:],
                       progress: (@Sendable (ResumableProgress) -> Void)? = nil) async throws -> ResumableUploadResult {
        let file = try ResumableFile(path: path)
        var fullMetadata = metadata
        fullMetadata["filename"] = fullMetadata["filename"] ?? file.name
        fullMetadata["filetype"] = fullMetadata["filetype"] ?? MIMEType.forFilename(file.path)
        let ranges = TusParallelUpload.ranges(length: file.body.contentLength ?? 0, parts: parallelUploads, minimum: Self.minimumChunkSize)
        // A run that goes on with parts an earlier run began sends them so, whatever OPTIONS says now.
        var parallel = ranges.count > 1 && stateStore?.load(matching: TusParallelUpload.partEntry(file, endpoint: endpoint, index: 0, count: ranges.count)) != nil
        if ranges.count > 1, !parallel { parallel = try await offersConcatenation(endpoint, headers: headers) }
        if parallel {
            let parallel = TusParallelUpload(uploader: self, file: file, endpoint: endpoint, metadata: fullMetadata, sender: sender(headers: headers), ranges: ranges)
            return try await parallel.perform(progress: progress)
        }
        let run = ResumableRun(exchange: TusExchange(metadata: fullMetadata, checksums: checksums), sender: sender(headers: headers),
                               plan: file.body.plan, retry: retry, stateStore: stateStore, forgetsOnCompletion: forgetsCompletedUploads, chunkSize: chunkSize,
                               minimumChunkSize: Self.minimumChunkSize, entry: file.entry(endpoint: endpoint, protocolName: TusExchange.protocolName), progress: progress)
        return try await run.perform(endpoint: endpoint)
    }

    /// Ends the upload at `uploadURL` on the server (tus's termination: `DELETE`); an
    /// upload already gone (404, 410) counts as ended.
    ///
    /// - Throws: ``ResumableUploadError/unexpectedStatus(_:during:bodyPrefix:)`` for another
    ///   answer than 2xx, 404 or 410; transport errors.
    public func terminate(_ uploadURL: URL, headers: HTTPFields = [:]) async throws {
        let answer = try await sender(headers: headers).send(.delete, uploadURL)
        guard (200..<300).contains(answer.status) || answer.status == 404 || answer.status == 410 else {
            throw ResumableUploadError.unexpectedStatus(answer.status, during: "the termination of \(uploadURL.absoluteString)", bodyPrefix: answer.bodyPrefix)
        }
    }

    /// Ends the upload of the file at `path` to `endpoint` that an earlier run left
    /// unfinished, and forgets it: the next upload of the file starts anew. Returns the
    /// upload's URL, or nil when none was kept.
    public func abandonUpload(fileAt path: String, to endpoint: URL, headers: HTTPFields = [:]) async throws -> URL? {
        let entry = try ResumableFile(path: path).entry(endpoint: endpoint, protocolName: TusExchange.protocolName)
        guard let kept = stateStore?.load(matching: entry), let url = URL(string: kept.uploadURL) else { return nil }
        try await terminate(url, headers: headers)
        stateStore?.remove(matching: entry)
        return url
    }

    /// Forgets the completed upload of `result` (kept when ``forgetsCompletedUploads`` is
    /// false), once its answer is reported: the next upload of the same body starts anew.
    public func forget(_ result: ResumableUploadResult) {
        if let entry = result.entry { stateStore?.remove(matching: entry) }
    }

    /// Whether the server at `endpoint` lists concatenation among its extensions; false
    /// when `OPTIONS` fails (the upload then goes as one, which asks again and retries).
    private func offersConcatenation(_ endpoint: URL, headers: HTTPFields) async throws -> Bool {
        let exchange = TusExchange(metadata: [:], checksums: false)
        do {
            try await exchange.prepare(endpoint: endpoint, sender: sender(headers: headers))
        } catch let error as ResumableUploadError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return false
        }
        return exchange.extensions.contains("concatenation")
    }

    private func sender(headers: HTTPFields) -> ResumableRequestSender {
        ResumableRequestSender(client: client, options: options, headers: headers, protocolFields: [.tusResumable: Self.version],
                               stallLimit: stallTimeout, answerLimit: answerTimeout)
    }
}
