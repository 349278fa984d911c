import Foundation
import HTTPTypes
import Multipart

/// One run of ``TusUploader/upload(fileAt:to:metadata:headers:progress:)``: its offset,
/// request size and failures in a row. It belongs to the task that runs it.
final class TusRun {
    private let uploader: TusUploader
    private let plan: BodyPlan
    private let length: Int64
    private let headers: HTTPFields
    private let progress: (@Sendable (ResumableProgress) -> Void)?
    private var entry: ResumeEntry
    private var chunkSize: Int64
    private var failures = 0
    /// 409s and 423s in a row: the server is still finishing an earlier append (of a run
    /// that was killed, say) or knows another offset. They are waited out, not retried.
    private var conflicts = 0
    /// The most 409s and 423s in a row, 250 ms apart, before the upload stops.
    private static let maxConflicts = 120
    private var resumedFrom: Int64 = 0

    /// How an upload kept from an earlier run stands on the server.
    private enum KeptUpload {
        case resumable(URL, offset: Int64, UploadResponse)
        case gone
    }

    init(uploader: TusUploader, plan: BodyPlan, length: Int64, headers: HTTPFields, progress: (@Sendable (ResumableProgress) -> Void)?, entry: ResumeEntry) {
        self.uploader = uploader
        self.plan = plan
        self.length = length
        self.headers = headers
        self.progress = progress
        self.entry = entry
        self.chunkSize = uploader.chunkSize
    }

    func perform(endpoint: URL, metadata: [String: String]) async throws -> ResumableUploadResult {
        var (url, offset, last) = try await resumeOrCreate(endpoint: endpoint, metadata: metadata)
        resumedFrom = offset
        report(acknowledged: offset, sent: offset)
        while offset < length {
            let start = offset
            let response: UploadResponse
            do {
                response = try await append(url, range: start..<min(start + chunkSize, length))
            } catch let error as MultipartError {
                throw ResumableUploadError.fileChanged(path: entry.path, reason: error.description)
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                offset = try await offsetAfterFailure(String(describing: error), url: url, offset: start)
                continue
            }
            last = response
            if response.status == 409 || response.status == 423 {
                conflicts += 1
                guard conflicts <= Self.maxConflicts else {
                    throw ResumableUploadError.unexpectedStatus(response.status, during: "an append at \(start), \(conflicts) times in a row", bodyPrefix: response.bodyPrefix)
                }
                try await Task.sleep(for: .milliseconds(250))
                offset = try await serverOffset(url)
                continue
            }
            guard response.status == 204 || response.status == 200,
                  let reached = response.headers[.uploadOffset].flatMap(Int64.init), reached > start, reached <= length else {
                try check(response, during: "an append at \(start)", url: url)
                offset = try await offsetAfterFailure("the server answered \(response.status) to an append at \(start)", url: url, offset: start)
                continue
            }
            offset = reached
            failures = 0
            conflicts = 0
            report(acknowledged: offset, sent: offset)
        }
        uploader.stateStore?.remove(matching: entry)
        return ResumableUploadResult(uploadURL: url, resumedFrom: resumedFrom, bytesSent: length - resumedFrom, response: last)
    }

    /// The upload kept from an earlier run, with the server's offset, or a new one.
    private func resumeOrCreate(endpoint: URL, metadata: [String: String]) async throws -> (URL, Int64, UploadResponse) {
        if let kept = uploader.stateStore?.load(matching: entry), let url = URL(string: kept.uploadURL) {
            let found: KeptUpload = try await retrying {
                let head = try await self.request(.head, url)
                if head.status == 404 || head.status == 410 || head.status == 403 { return .gone }
                try self.check(head, during: "HEAD of the kept upload", url: url)
                guard head.status == 200, let offset = head.headers[.uploadOffset].flatMap(Int64.init), offset <= self.length else {
                    try await self.backOff("the server answered \(head.status) to HEAD")
                    return nil
                }
                return .resumable(url, offset: offset, head)
            }
            switch found {
            case .resumable(let url, let offset, let head):
                entry.uploadURL = kept.uploadURL
                return (url, offset, head)
            case .gone:
                uploader.stateStore?.remove(matching: entry)
            }
        }
        return try await retrying {
            var fields: HTTPFields = [.uploadLength: String(self.length)]
            fields[.uploadMetadata] = metadata.sorted { $0.key < $1.key }
                .map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
            let created = try await self.request(.post, endpoint, fields: fields)
            try self.check(created, during: "the creation of an upload", url: endpoint)
            guard created.status == 201, let location = created.headers[.location],
                  let url = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
                try await self.backOff("the server answered \(created.status) without a Location to the creation of an upload")
                return nil
            }
            self.entry.uploadURL = url.absoluteString
            try? self.uploader.stateStore?.save(self.entry)
            return (url, 0, created)
        }
    }

    /// Sends the file's bytes `range` at its offset.
    private func append(_ url: URL, range: Range<Int64>) async throws -> UploadResponse {
        let body = RequestBody(plan: try plan.slice(range), contentType: "application/offset+octet-stream")
        var fields = headers
        fields[.tusResumable] = TusUploader.version
        fields[.uploadOffset] = String(range.lowerBound)
        let (start, total, resumedFrom) = (range.lowerBound, length, self.resumedFrom)
        let report = progress.map { handler in
            { @Sendable (sent: UploadProgress) in
                handler(ResumableProgress(acknowledged: start, sent: start + sent.bytesSent, total: total, resumedFrom: resumedFrom))
            }
        }
        return try await uploader.client.send(body, to: url, method: RequestMethod(rawValue: "PATCH"), headers: fields, options: uploader.options, progress: report)
    }

    /// After a failed append from `offset`: waits, asks the server for its offset, and
    /// halves the requests when the failure gained nothing; returns the server's offset.
    private func offsetAfterFailure(_ reason: String, url: URL, offset: Int64) async throws -> Int64 {
        try await backOff(reason)
        let reached = try await serverOffset(url)
        if reached <= offset { chunkSize = max(chunkSize / 2, TusUploader.minimumChunkSize) }
        return reached
    }

    /// The upload's offset as the server says (`HEAD`), reported as acknowledged.
    private func serverOffset(_ url: URL) async throws -> Int64 {
        let reached: Int64 = try await retrying {
            let head = try await self.request(.head, url)
            try self.check(head, during: "HEAD of the upload", url: url)
            guard head.status == 200, let reached = head.headers[.uploadOffset].flatMap(Int64.init), reached <= self.length else {
                try await self.backOff("the server answered \(head.status) to HEAD")
                return nil
            }
            return reached
        }
        report(acknowledged: reached, sent: reached)
        return reached
    }

    /// Runs `attempt` until it gives a value (nil: it has backed off, try again). Any
    /// other error than a ``ResumableUploadError`` or a cancellation counts as a failure.
    private func retrying<T>(_ attempt: () async throws -> T?) async throws -> T {
        while true {
            do {
                if let value = try await attempt() { return value }
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try await backOff(String(describing: error))
            }
        }
    }

    /// Counts a failure, and waits as the retry policy says, or throws when it allows no more.
    private func backOff(_ reason: String) async throws {
        failures += 1
        guard let delay = uploader.retry.delay(attempt: failures, status: nil, retryAfter: nil) else {
            throw ResumableUploadError.retriesExhausted(attempts: failures, lastError: reason)
        }
        try await Task.sleep(for: delay)
    }

    /// Throws for answers no retry can mend: 412, a gone upload, other 4xx than 408, 409, 423 and 429.
    private func check(_ response: UploadResponse, during what: String, url: URL) throws {
        switch response.status {
        case 412:
            throw ResumableUploadError.protocolUnsupported(status: 412, detail: "it speaks tus \(response.headers[.tusVersion] ?? "of another version")")
        case 404, 410:
            uploader.stateStore?.remove(matching: entry)
            throw ResumableUploadError.uploadGone(url: url.absoluteString)
        case 400..<500 where ![408, 409, 423, 429].contains(response.status):
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
