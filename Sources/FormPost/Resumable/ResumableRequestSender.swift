#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart

/// Sends the requests of one resumable upload: every request carries the caller's header
/// fields and the protocol's own, goes with the caller's options (without their retries:
/// the upload retries itself, after asking the server where it stands — also when a
/// connection closed before any answer, which ``FormPostClient`` would otherwise send again
/// whole), and fails once it makes no progress for the stall limit, or no answer comes
/// within the answer limit of its end.
struct ResumableRequestSender: Sendable {
    let client: FormPostClient
    let options: UploadOptions
    /// The caller's fields, sent with every request.
    let headers: HTTPFields
    /// The fields of the protocol, sent with every request (`Tus-Resumable`, `Upload-Draft-Interop-Version`).
    let protocolFields: HTTPFields
    let stallLimit: Duration
    /// How long the answer may take once the body is all sent.
    let answerLimit: Duration

    /// Sends `method` to `url` with `fields` (over the caller's) and `body`.
    func send(_ method: RequestMethod, _ url: URL, fields: HTTPFields = [:], body: RequestBody? = nil,
              progress: (@Sendable (UploadProgress) -> Void)? = nil) async throws -> UploadResponse {
        var all = headers
        for field in protocolFields + fields { all[field.name] = field.value }
        let watch = StallWatch(limit: stallLimit, answerLimit: answerLimit)
        let (client, options) = (self.client, self.options)
        let request = client.requestSerializer.request(method, url, body: body, headers: all)
        return try await watch.run {
            try await client.send(request, options: options, resendsAfterClose: false) { sent in
                watch.touch(bodySent: sent.totalBytes.map { sent.bytesSent >= $0 } ?? false)
                progress?(sent)
            }
        }
    }
}

/// What a server says of an upload it holds.
struct UploadOffsetAnswer {
    /// The bytes it has.
    let offset: Int64
    /// Whether the upload is complete (the IETF draft's `Upload-Complete`; for tus, all bytes are there).
    let complete: Bool
    /// Its answer.
    let response: UploadResponse
}

/// How an append was answered.
enum AppendOutcome: Equatable {
    /// The server has the bytes up to this offset; the upload goes on.
    case advanced(to: Int64)
    /// The upload is complete: the answer is the final one.
    case completed
    /// The server holds another offset, or is still busy with an earlier request (409, 423):
    /// wait a little, and go on from its offset (given, or asked for).
    case conflict(serverOffset: Int64?)
    /// The request was too large for the server (413): send smaller ones.
    case tooLarge
    /// The request failed in a way a retry may mend (5xx, 408, 429, a checksum mismatch).
    case failed(String)
}

/// The requests of one resumable-upload protocol (tus 1.0, or the IETF draft), for
/// ``ResumableRun``, which drives the upload: what is sent, and what the answers mean.
/// Fatal answers throw a ``ResumableUploadError``; an exchange belongs to one run.
protocol ResumableExchange: AnyObject {
    /// The largest request content the server accepts, once known.
    var maxAppendSize: Int64? { get }
    /// The least request content the server accepts (but in the last request), once known.
    var minAppendSize: Int64? { get }
    /// Learns what the server offers before the first request of a run (tus: `OPTIONS`).
    func prepare(endpoint: URL, sender: ResumableRequestSender) async throws
    /// Creates an upload of `length` bytes at `endpoint`.
    /// - Throws: ``RetryableAnswer`` when a retry may mend the answer, ``ResumableUploadError`` when none can.
    func create(at endpoint: URL, length: Int64, sender: ResumableRequestSender) async throws -> (URL, UploadOffsetAnswer)
    /// Asks where `url` stands.
    /// - Throws: ``ResumableUploadError/uploadGone(url:)`` for a 404 or 410, ``RetryableAnswer``
    ///   when a retry may mend the answer.
    func offset(of url: URL, length: Int64, sender: ResumableRequestSender) async throws -> UploadOffsetAnswer
    /// Sends the bytes `range` of `plan` to `url`.
    func append(to url: URL, range: Range<Int64>, of plan: BodyPlan, length: Int64, sender: ResumableRequestSender,
                progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> UploadResponse
    /// What an append's answer means.
    func outcome(of response: UploadResponse, range: Range<Int64>, length: Int64, url: URL) throws -> AppendOutcome
    /// The answer to report for an upload the server says is complete although its final
    /// answer never arrived (a run killed at the end, say); `head` is the offset's answer.
    ///
    /// - Throws: When asking for it failed (the run retries).
    func finalAnswer(for url: URL, length: Int64, head: UploadResponse, sender: ResumableRequestSender) async throws -> UploadResponse
}

/// A server busy with an earlier request of the upload (423): waited out, not a failure.
struct ServerBusy: Error, CustomStringConvertible {
    let status: Int
    let during: String
    var description: String { "the server answered \(status) to \(during): it is busy with an earlier request" }
}

/// An answer a retry may mend (a 5xx, a 408, an answer without the field it needs): the
/// run backs off and sends the request again.
struct RetryableAnswer: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
