#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// The requests of the IETF draft "Resumable Uploads for HTTP" for ``ResumableRun``, in
/// its careful creation, which needs no interim (104) response: the request to the target
/// carries no content and `Upload-Complete: ?0`, its answer names the upload resource
/// (`Location`) and its limits (`Upload-Limit`); each `PATCH` then appends
/// `application/partial-upload` at `Upload-Offset`, the last with `Upload-Complete: ?1`,
/// whose answer is the target's answer to the whole representation.
final class DraftExchange: ResumableExchange {
    /// The protocol's name in the state store's entries.
    static let protocolName = "ietf"
    private let method: RequestMethod
    /// The representation's `Content-Type` (and `Content-Disposition`), sent with the creation.
    private let representationFields: HTTPFields
    private let contentType: String
    /// The limits the server announced.
    private(set) var limits = UploadLimits()

    init(method: RequestMethod, contentType: String, representationFields: HTTPFields) {
        self.method = method
        self.contentType = contentType
        self.representationFields = representationFields
    }

    var maxAppendSize: Int64? { limits.maxAppendSize }
    var minAppendSize: Int64? { limits.minAppendSize }

    func prepare(endpoint: URL, sender: ResumableRequestSender) async throws {}

    func create(at endpoint: URL, length: Int64, sender: ResumableRequestSender) async throws -> (URL, UploadOffsetAnswer) {
        var fields = representationFields
        fields[.uploadComplete] = StructuredField.serialize(false)
        fields[.uploadLength] = String(length)
        let created = try await sender.send(method, endpoint, fields: fields, body: .bytes([], contentType: contentType))
        if created.status == 413 {
            learnLimits(from: created)
            throw ResumableUploadError.tooLarge(size: length, limit: limits.maxSize)
        }
        if StructuredField.boolean(created.headers[.uploadComplete]) == true {
            throw ResumableUploadError.unexpectedStatus(created.status, during: "the creation of an upload (the target answered for the whole upload)", bodyPrefix: created.bodyPrefix)
        }
        try check(created, during: "the creation of an upload", url: endpoint)
        guard (200..<300).contains(created.status) else {
            throw RetryableAnswer("the server answered \(created.status) to the creation of an upload")
        }
        guard let location = created.headers[.location], let url = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
            throw ResumableUploadError.protocolUnsupported(status: created.status, detail: "\(endpoint.absoluteString) answered without a Location: it offers no resumable uploads")
        }
        learnLimits(from: created)
        if let most = limits.maxSize, most < length {
            _ = try? await sender.send(.delete, url)
            throw ResumableUploadError.tooLarge(size: length, limit: most)
        }
        let offset = StructuredField.integer(created.headers[.uploadOffset]) ?? 0
        return (url, UploadOffsetAnswer(offset: min(offset, length), complete: false, response: created))
    }

    func offset(of url: URL, length: Int64, sender: ResumableRequestSender) async throws -> UploadOffsetAnswer {
        let head = try await sender.send(.head, url)
        if head.status == 423 { throw ServerBusy(status: 423, during: "HEAD of the upload") }
        try check(head, during: "HEAD of the upload", url: url)
        guard (200..<300).contains(head.status), let offset = StructuredField.integer(head.headers[.uploadOffset]) else {
            throw RetryableAnswer("the server answered \(head.status) without a usable Upload-Offset to HEAD")
        }
        guard offset <= length else {
            throw ResumableUploadError.unexpectedStatus(head.status, during: "HEAD of the upload (an offset of \(offset), past the \(length) bytes)", bodyPrefix: head.bodyPrefix)
        }
        learnLimits(from: head)
        return UploadOffsetAnswer(offset: offset, complete: StructuredField.boolean(head.headers[.uploadComplete]) == true, response: head)
    }

    func append(to url: URL, range: Range<Int64>, of plan: BodyPlan, length: Int64, sender: ResumableRequestSender,
                progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> UploadResponse {
        let fields: HTTPFields = [
            .uploadOffset: String(range.lowerBound),
            .uploadComplete: StructuredField.serialize(range.upperBound == length),
        ]
        let body = RequestBody(plan: try plan.slice(range), contentType: DraftInterop.partialUpload)
        return try await sender.send(.patch, url, fields: fields, body: body, progress: progress)
    }

    func outcome(of response: UploadResponse, range: Range<Int64>, length: Int64, url: URL) throws -> AppendOutcome {
        let complete = StructuredField.boolean(response.headers[.uploadComplete])
        // The target's answer to the whole representation, whatever its status.
        if complete == true { return .completed }
        switch response.status {
        case 200..<300:
            if range.upperBound == length, complete == nil { return .completed }
            let reached = StructuredField.integer(response.headers[.uploadOffset]) ?? range.upperBound
            guard reached > range.lowerBound, reached <= length else {
                return .failed("the server answered \(response.status) to an append at \(range.lowerBound) with an offset of \(reached)")
            }
            return .advanced(to: reached)
        case 409, 423:
            return .conflict(serverOffset: StructuredField.integer(response.headers[.uploadOffset]))
        case 413:
            learnLimits(from: response)
            return .tooLarge
        default:
            try check(response, during: "an append at \(range.lowerBound)", url: url)
            return .failed("the server answered \(response.status) to an append at \(range.lowerBound)")
        }
    }

    /// The final answer was lost: an empty append with `Upload-Complete: ?1` at the end
    /// asks the server to answer it again (the draft lets a server replay it) — whatever
    /// its status, an answer with `Upload-Complete: ?1` is the target's; a server that does
    /// not replay leaves the `HEAD`'s answer. A request that fails (cut, or a 5xx) is
    /// thrown, for the run to send again.
    func finalAnswer(for url: URL, length: Int64, head: UploadResponse, sender: ResumableRequestSender) async throws -> UploadResponse {
        let fields: HTTPFields = [.uploadOffset: String(length), .uploadComplete: StructuredField.serialize(true)]
        let replay = try await sender.send(.patch, url, fields: fields, body: .bytes([], contentType: DraftInterop.partialUpload))
        if StructuredField.boolean(replay.headers[.uploadComplete]) == true { return replay }
        if replay.status >= 500 || [408, 423, 429].contains(replay.status) { throw RetryableAnswer("the server answered \(replay.status) when asked for the final answer again") }
        return head
    }

    /// Throws for answers no retry can mend: a gone upload (404, 410), other 4xx than 408,
    /// 409, 423 and 429 (413 is the run's to mend).
    private func check(_ response: UploadResponse, during what: String, url: URL) throws {
        switch response.status {
        case 404, 410:
            throw ResumableUploadError.uploadGone(url: url.absoluteString)
        case 400..<500 where ![408, 409, 423, 429].contains(response.status):
            throw ResumableUploadError.unexpectedStatus(response.status, during: what, bodyPrefix: response.bodyPrefix)
        default:
            return
        }
    }

    private func learnLimits(from response: UploadResponse) {
        if let field = response.headers[.uploadLimit], let announced = UploadLimits(field: field) { limits = announced }
    }
}
