#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// One file sent as partial uploads at once, then joined by the server (tus's
/// concatenation): the file's ranges in equal parts, each a ``ResumableRun`` of its own that
/// resumes on its own after a cut, also in a later run (each part has its entry in the state
/// store); once all are complete, a final upload (`Upload-Concat: final;URL URL…`) with the
/// file's metadata joins them, and its answer is the upload's.
struct TusParallelUpload {
    let uploader: TusUploader
    let file: ResumableFile
    let endpoint: URL
    let metadata: [String: String]
    let sender: ResumableRequestSender
    /// The ranges of the file, one per partial upload.
    let ranges: [Range<Int64>]

    /// The ranges of `length` bytes in `parts` parts of nearly equal size, each at least
    /// `minimum` bytes (fewer parts when the file is small: one means no concatenation).
    static func ranges(length: Int64, parts: Int, minimum: Int64) -> [Range<Int64>] {
        let count = Int(max(1, min(Int64(max(parts, 1)), length / max(minimum, 1))))
        let size = length / Int64(count)
        return (0..<count).map { index in
            let start = Int64(index) * size
            return start..<(index == count - 1 ? length : start + size)
        }
    }

    /// The state store's entry of part `index` (from 0) of `count`.
    static func partEntry(_ file: ResumableFile, endpoint: URL, index: Int, count: Int) -> ResumeEntry {
        file.entry(endpoint: endpoint, protocolName: "\(TusExchange.protocolName) part \(index + 1) of \(count)")
    }

    /// The state store's entry of the final upload, kept once it is created when the
    /// uploader does not forget completed uploads.
    private var finalEntry: ResumeEntry {
        file.entry(endpoint: endpoint, protocolName: "\(TusExchange.protocolName) final of \(ranges.count)")
    }

    /// Sends the parts at once and joins them; reports the sum of the parts' progress.
    func perform(progress: (@Sendable (ResumableProgress) -> Void)?) async throws -> ResumableUploadResult {
        let length = ranges.last?.upperBound ?? 0
        if let done = try await keptFinal(length: length) { return done }
        let sum = PartsProgress(parts: ranges.count, total: length, report: progress)
        let parts = try await withThrowingTaskGroup(of: (Int, ResumableUploadResult).self) { group in
            for (index, range) in ranges.enumerated() {
                let run = ResumableRun(exchange: TusExchange(metadata: [:], checksums: uploader.checksums, partial: true), sender: sender,
                                       plan: try file.body.plan.slice(range), retry: uploader.retry, stateStore: uploader.stateStore,
                                       forgetsOnCompletion: false, chunkSize: uploader.chunkSize, minimumChunkSize: TusUploader.minimumChunkSize,
                                       entry: Self.partEntry(file, endpoint: endpoint, index: index, count: ranges.count),
                                       progress: { sum.update(index, $0) })
                group.addTask { (index, try await run.perform(endpoint: endpoint)) }
            }
            var parts = [ResumableUploadResult?](repeating: nil, count: ranges.count)
            for try await (index, result) in group { parts[index] = result }
            return parts.compactMap { $0 }
        }
        let (url, answer) = try await createFinal(joining: parts.map(\.uploadURL))
        for part in parts { if let entry = part.entry { uploader.stateStore?.remove(matching: entry) } }
        var entry: ResumeEntry?
        if !uploader.forgetsCompletedUploads {
            entry = finalEntry
            entry?.uploadURL = url.absoluteString
            try? uploader.stateStore?.save(entry!)
        }
        return ResumableUploadResult(uploadURL: url, resumedFrom: parts.reduce(0) { $0 + $1.resumedFrom },
                                     bytesSent: parts.reduce(0) { $0 + $1.bytesSent }, response: answer, entry: entry)
    }

    /// The final upload an earlier run created and did not forget, when the server says it
    /// is complete.
    private func keptFinal(length: Int64) async throws -> ResumableUploadResult? {
        guard let kept = uploader.stateStore?.load(matching: finalEntry), let url = URL(string: kept.uploadURL) else { return nil }
        let head = try await sender.send(.head, url)
        guard (200..<300).contains(head.status), head.headers[.uploadOffset] == String(length) else {
            uploader.stateStore?.remove(matching: kept)
            return nil
        }
        return ResumableUploadResult(uploadURL: url, resumedFrom: length, bytesSent: 0, response: head, entry: kept)
    }

    /// `POST` of the final upload joining `parts`, in order, retried as the uploader's
    /// ``TusUploader/retry`` says; its URL and answer.
    private func createFinal(joining parts: [URL]) async throws -> (URL, UploadResponse) {
        var fields: HTTPFields = [.uploadConcat: "final;" + parts.map(\.absoluteString).joined(separator: " ")]
        fields[.uploadMetadata] = TusMetadata.encode(metadata)
        var failures = 0
        while true {
            // A 429 or 503 with Retry-After is waited out as it says.
            var busy: (status: Int, retryAfter: String?)?
            do {
                let created = try await sender.send(.post, endpoint, fields: fields)
                try TusExchange.check(created, during: "the creation of the final upload joining \(parts.count) parts", url: endpoint)
                guard created.status == 201, let location = created.headers[.location],
                      let url = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
                    if created.status == 429 || created.status == 503 { busy = (created.status, created.headers[.retryAfter]) }
                    throw RetryableAnswer("the server answered \(created.status) without a Location to the creation of the final upload")
                }
                return (url, created)
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                failures += 1
                guard let delay = uploader.retry.delay(attempt: failures, status: busy?.status, retryAfter: busy?.retryAfter) else {
                    throw ResumableUploadError.retriesExhausted(attempts: failures, lastError: String(describing: error))
                }
                try await Task.sleep(for: delay)
            }
        }
    }
}
