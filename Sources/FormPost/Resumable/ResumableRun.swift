#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart

/// One run of a resumable upload, whatever its protocol (``ResumableExchange``): it
/// creates the upload or finds the one an earlier run left (``ResumeStateStore``), sends
/// the body's ranges, and after a failure asks the server for its offset and goes on from
/// there. It belongs to the task that runs it.
final class ResumableRun {
    private let exchange: any ResumableExchange
    private let sender: ResumableRequestSender
    private let plan: BodyPlan
    private let length: Int64
    private let retry: RetryPolicy
    private let stateStore: ResumeStateStore?
    /// Whether a completed upload leaves the state store at once; else its entry stays
    /// until the caller forgets it (``ResumableUploadResult``), having reported its answer.
    private let forgetsOnCompletion: Bool
    private let progress: (@Sendable (ResumableProgress) -> Void)?
    private var entry: ResumeEntry
    private var chunkSize: Int64
    private let minimumChunkSize: Int64
    private var failures = 0
    /// 409s and 423s in a row: the server is still finishing an earlier append (of a run
    /// that was killed, say) or knows another offset. They are waited out, not retried.
    private var conflicts = 0
    /// The most 409s and 423s in a row before the upload stops: about 30 s of waiting.
    private static let maxConflicts = 125
    private var resumedFrom: Int64 = 0

    /// The wait before asking again after the `count`th 409 or 423 in a row: 10 ms, doubled
    /// each time up to 250 ms. A run resumed at once after a cut usually finds the server
    /// about to release the cut request within milliseconds.
    static func conflictWait(_ count: Int) -> Duration {
        .milliseconds(min(250, 10 << min(max(count - 1, 0), 5)))
    }

    init(exchange: any ResumableExchange, sender: ResumableRequestSender, plan: BodyPlan, retry: RetryPolicy, stateStore: ResumeStateStore?,
         forgetsOnCompletion: Bool, chunkSize: Int64, minimumChunkSize: Int64, entry: ResumeEntry, progress: (@Sendable (ResumableProgress) -> Void)?) {
        self.exchange = exchange
        self.sender = sender
        self.plan = plan
        self.length = plan.contentLength ?? 0
        self.retry = retry
        self.stateStore = stateStore
        self.forgetsOnCompletion = forgetsOnCompletion
        self.chunkSize = max(chunkSize, 1)
        self.minimumChunkSize = minimumChunkSize
        self.entry = entry
        self.progress = progress
    }

    /// Uploads the body to the creation endpoint `endpoint`, or goes on with the upload an
    /// earlier run left.
    func perform(endpoint: URL) async throws -> ResumableUploadResult {
        try await retrying { try await self.exchange.prepare(endpoint: endpoint, sender: self.sender) }
        let (url, state) = try await resumeOrCreate(endpoint: endpoint)
        var offset = state.offset
        var last = state.response
        var complete = state.complete
        /// The answer to the append that completed the upload, when this run had it.
        var finalAnswer: UploadResponse?
        resumedFrom = offset
        report(acknowledged: offset, sent: offset)
        while !complete {
            let start = offset
            let size = requestSize()
            let range = start..<(length - start <= size ? length : start + size)
            let rangeSize = range.upperBound - range.lowerBound
            let response: UploadResponse
            do {
                response = try await append(url, range: range)
            } catch let error as MultipartError {
                throw ResumableUploadError.fileChanged(path: entry.path, reason: error.description)
            } catch let error as ResumableUploadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                (offset, complete, last) = try await stateAfterFailure(String(describing: error), url: url, offset: start, last: last)
                continue
            }
            let outcome: AppendOutcome
            do {
                outcome = try exchange.outcome(of: response, range: range, length: length, url: url)
            } catch ResumableUploadError.uploadGone(let gone) {
                stateStore?.remove(matching: entry)
                throw ResumableUploadError.uploadGone(url: gone)
            }
            switch outcome {
            case .advanced(let reached):
                offset = reached
                last = response
                failures = 0
                conflicts = 0
                report(acknowledged: offset, sent: offset)
            case .completed:
                offset = length
                finalAnswer = response
                complete = true
                report(acknowledged: length, sent: length)
            case .conflict(let serverOffset):
                conflicts += 1
                guard conflicts <= Self.maxConflicts else {
                    throw ResumableUploadError.unexpectedStatus(response.status, during: "an append at \(start), \(conflicts) times in a row", bodyPrefix: response.bodyPrefix)
                }
                try await Task.sleep(for: Self.conflictWait(conflicts))
                if let serverOffset, serverOffset <= length {
                    offset = serverOffset
                    report(acknowledged: offset, sent: offset)
                } else {
                    (offset, complete, last) = try await serverState(url, last: last)
                }
            case .tooLarge:
                guard chunkSize > floor, rangeSize > floor else {
                    throw ResumableUploadError.unexpectedStatus(response.status, during: "an append of \(rangeSize) bytes at \(start)", bodyPrefix: response.bodyPrefix)
                }
                chunkSize = max(min(chunkSize, rangeSize) / 2, floor)
                (offset, complete, last) = try await stateAfterFailure("the server found \(rangeSize) bytes too large", url: url, offset: start,
                                                                       last: last, halvesWhenStalled: false)
            case .failed(let reason):
                (offset, complete, last) = try await stateAfterFailure(reason, url: url, offset: start, last: last)
            }
        }
        let answer: UploadResponse
        if let finalAnswer {
            answer = finalAnswer
        } else {
            answer = try await retrying { try await self.exchange.finalAnswer(for: url, length: self.length, head: last, sender: self.sender) }
        }
        if forgetsOnCompletion { stateStore?.remove(matching: entry) }
        return ResumableUploadResult(uploadURL: url, resumedFrom: resumedFrom, bytesSent: length - resumedFrom, response: answer,
                                     entry: forgetsOnCompletion ? nil : entry)
    }

    /// The size of the next request: the run's, within what the server accepts.
    private func requestSize() -> Int64 {
        let size = max(chunkSize, exchange.minAppendSize ?? 0)
        guard let most = exchange.maxAppendSize, most > 0 else { return size }
        return min(size, most)
    }

    /// The smallest request the run cuts its requests down to.
    private var floor: Int64 { max(minimumChunkSize, exchange.minAppendSize ?? 0) }

    /// The upload kept from an earlier run, with where it stands, or a new one.
    private func resumeOrCreate(endpoint: URL) async throws -> (URL, UploadOffsetAnswer) {
        if let kept = stateStore?.load(matching: entry), let url = URL(string: kept.uploadURL) {
            do {
                let state = try await retrying { try await self.exchange.offset(of: url, length: self.length, sender: self.sender) }
                entry.uploadURL = kept.uploadURL
                return (url, state)
            } catch ResumableUploadError.uploadGone {
                stateStore?.remove(matching: entry)
            }
        }
        let (url, state) = try await retrying { try await self.exchange.create(at: endpoint, length: self.length, sender: self.sender) }
        entry.uploadURL = url.absoluteString
        if !state.complete { try? stateStore?.save(entry) }
        return (url, state)
    }

    /// Sends the body's bytes `range` at its offset.
    private func append(_ url: URL, range: Range<Int64>) async throws -> UploadResponse {
        let (start, total, resumedFrom) = (range.lowerBound, length, self.resumedFrom)
        let handler = progress
        return try await exchange.append(to: url, range: range, of: plan, length: length, sender: sender) { sent in
            handler?(ResumableProgress(acknowledged: start, sent: start + sent.bytesSent, total: total, resumedFrom: resumedFrom))
        }
    }

    /// After a failed request from `offset`: waits, asks the server where the upload
    /// stands, and (unless told not to) halves the requests when the failure gained
    /// nothing: a server that keeps nothing of a cut request never sees a whole one of
    /// the size that keeps being cut.
    private func stateAfterFailure(_ reason: String, url: URL, offset: Int64, last: UploadResponse,
                                   halvesWhenStalled: Bool = true) async throws -> (Int64, Bool, UploadResponse) {
        try await backOff(reason)
        let state = try await serverState(url, last: last)
        if halvesWhenStalled, state.0 <= offset, !state.1 { chunkSize = max(chunkSize / 2, floor) }
        return state
    }

    /// Where the upload stands as the server says, reported as acknowledged.
    private func serverState(_ url: URL, last: UploadResponse) async throws -> (Int64, Bool, UploadResponse) {
        let state: UploadOffsetAnswer
        do {
            state = try await retrying { try await self.exchange.offset(of: url, length: self.length, sender: self.sender) }
        } catch let error as ResumableUploadError {
            if case .uploadGone = error { stateStore?.remove(matching: entry) }
            throw error
        }
        report(acknowledged: state.offset, sent: state.offset)
        return (state.offset, state.complete, state.complete ? state.response : last)
    }

    /// Runs `attempt` until it gives a value. Any other error than a
    /// ``ResumableUploadError`` or a cancellation (a connection's, a stall, a
    /// ``RetryableAnswer``) counts as a failure, and `attempt` runs again after a back-off.
    private func retrying<T>(_ attempt: () async throws -> T) async throws -> T {
        while true {
            do {
                let value = try await attempt()
                conflicts = 0
                return value
            } catch let busy as ServerBusy {
                // The server is still busy with an earlier request of the upload (finishing a
                // large form, say): waited out, not counted as a failure.
                conflicts += 1
                guard conflicts <= Self.maxConflicts else {
                    throw ResumableUploadError.unexpectedStatus(busy.status, during: "\(busy.during), \(conflicts) times in a row", bodyPrefix: "")
                }
                try await Task.sleep(for: Self.conflictWait(conflicts))
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
        guard let delay = retry.delay(attempt: failures, status: nil, retryAfter: nil) else {
            throw ResumableUploadError.retriesExhausted(attempts: failures, lastError: reason)
        }
        try await Task.sleep(for: delay)
    }

    private func report(acknowledged: Int64, sent: Int64) {
        progress?(ResumableProgress(acknowledged: acknowledged, sent: sent, total: length, resumedFrom: resumedFrom))
    }
}
