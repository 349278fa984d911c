import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Multipart
import ResumableHTTP

/// tus 1.0's requests (core protocol, creation, checksum, termination) for ``ResumableRun``:
/// `OPTIONS` learns the server's extensions, `POST` creates, `HEAD` tells the offset,
/// `PATCH` appends `application/offset+octet-stream` — with `Upload-Checksum` when the
/// server verifies one (SHA-256, else SHA-1) and ``TusUploader/checksums`` allows it.
final class TusExchange: ResumableExchange {
    /// The protocol's name in the state store's entries.
    static let protocolName = "tus"
    let maxAppendSize: Int64? = nil
    let minAppendSize: Int64? = nil
    private let metadata: [String: String]
    private let checksums: Bool
    /// Whether the upload is a partial upload of a concatenation (`Upload-Concat: partial`).
    private let partial: Bool
    /// The extensions the server listed in its answer to `OPTIONS` (none when it did not).
    private(set) var extensions: Set<String> = []
    /// The checksum each append carries, once the server has offered one.
    private(set) var checksum: TusChecksumAlgorithm?
    /// The checksum of the range expected next, computed while the current one is sent.
    private var nextChecksum: (range: Range<Int64>, digest: Task<String, any Error>)?

    init(metadata: [String: String], checksums: Bool, partial: Bool = false) {
        self.metadata = metadata
        self.checksums = checksums
        self.partial = partial
    }

    deinit { nextChecksum?.digest.cancel() }

    /// `OPTIONS` on the creation endpoint: the server must support the creation extension
    /// if it lists its extensions; its checksum algorithms are noted. A server that does
    /// not answer `OPTIONS` (4xx) is taken to support creation, without checksums.
    func prepare(endpoint: URL, sender: ResumableRequestSender) async throws {
        let answer = try await sender.send(.options, endpoint)
        if answer.status >= 500 { throw RetryableAnswer("the server answered \(answer.status) to OPTIONS") }
        guard (200..<300).contains(answer.status) else { return }
        if let versions = answer.headers[.tusVersion], !versions.split(separator: ",").contains(where: { $0.trimmingOptionalWhitespace() == TusUploader.version }) {
            throw ResumableUploadError.protocolUnsupported(status: answer.status, detail: "it speaks tus \(versions), not \(TusUploader.version)")
        }
        extensions = Set((answer.headers[.tusExtension] ?? "").split(separator: ",").map { String($0.trimmingOptionalWhitespace()) })
        if answer.headers[.tusExtension] != nil, !extensions.contains("creation") {
            throw ResumableUploadError.protocolUnsupported(status: answer.status, detail: "it lacks the creation extension (it offers \(extensions.sorted().joined(separator: ", ")))")
        }
        if checksums, extensions.contains("checksum") {
            checksum = TusChecksumAlgorithm.offered(answer.headers[.tusChecksumAlgorithm]).first
        }
    }

    func create(at endpoint: URL, length: Int64, sender: ResumableRequestSender) async throws -> (URL, UploadOffsetAnswer) {
        var fields: HTTPFields = [.uploadLength: String(length)]
        if !metadata.isEmpty { fields[.uploadMetadata] = TusMetadata.encode(metadata) }
        if partial { fields[.uploadConcat] = "partial" }
        let created = try await sender.send(.post, endpoint, fields: fields)
        try Self.check(created, during: "the creation of an upload", url: endpoint)
        guard created.status == 201, let location = created.headers[.location],
              let url = URL(string: location, relativeTo: endpoint)?.absoluteURL else {
            throw RetryableAnswer("the server answered \(created.status) without a Location to the creation of an upload")
        }
        return (url, UploadOffsetAnswer(offset: 0, complete: length == 0, response: created))
    }

    func offset(of url: URL, length: Int64, sender: ResumableRequestSender) async throws -> UploadOffsetAnswer {
        let head = try await sender.send(.head, url)
        if head.status == 403 { throw ResumableUploadError.uploadGone(url: url.absoluteString) }
        try Self.check(head, during: "HEAD of the upload", url: url)
        guard (200..<300).contains(head.status), let offset = head.headers[.uploadOffset].flatMap(Int64.init), offset <= length else {
            throw RetryableAnswer("the server answered \(head.status) without a usable Upload-Offset to HEAD")
        }
        return UploadOffsetAnswer(offset: offset, complete: offset == length, response: head)
    }

    func append(to url: URL, range: Range<Int64>, of plan: BodyPlan, length: Int64, sender: ResumableRequestSender,
                progress: @escaping @Sendable (UploadProgress) -> Void) async throws -> UploadResponse {
        let slice = try plan.slice(range)
        var fields: HTTPFields = [.uploadOffset: String(range.lowerBound)]
        if let checksum {
            let digest: String
            if let next = nextChecksum, next.range == range {
                digest = try await next.digest.value
            } else {
                nextChecksum?.digest.cancel()
                digest = try await Self.digest(of: slice, with: checksum)
            }
            fields[.uploadChecksum] = "\(checksum.rawValue) \(digest)"
            // The next request is most likely the next range of the same size: its checksum
            // is computed while this one is sent, on a core the sending leaves free.
            let size = range.upperBound - range.lowerBound
            let following = range.upperBound..<(length - range.upperBound <= size ? length : range.upperBound + size)
            if following.isEmpty {
                nextChecksum = nil
            } else {
                nextChecksum = (following, Self.digestTask(of: try plan.slice(following), with: checksum))
            }
        }
        let body = RequestBody(plan: slice, contentType: "application/offset+octet-stream")
        return try await sender.send(.patch, url, fields: fields, body: body, progress: progress)
    }

    func outcome(of response: UploadResponse, range: Range<Int64>, length: Int64, url: URL) throws -> AppendOutcome {
        switch response.status {
        case 200..<300:
            guard let reached = response.headers[.uploadOffset].flatMap(Int64.init), reached > range.lowerBound, reached <= length else {
                return .failed("the server answered \(response.status) to an append at \(range.lowerBound) without a greater Upload-Offset")
            }
            return reached == length ? .completed : .advanced(to: reached)
        case 409, 423:
            return .conflict(serverOffset: nil)
        case 413:
            return .tooLarge
        case 460:
            return .failed("the server found the checksum of the append at \(range.lowerBound) wrong")
        default:
            try Self.check(response, during: "an append at \(range.lowerBound)", url: url)
            return .failed("the server answered \(response.status) to an append at \(range.lowerBound)")
        }
    }

    func finalAnswer(for url: URL, length: Int64, head: UploadResponse, sender: ResumableRequestSender) async throws -> UploadResponse { head }

    /// Throws for answers no retry can mend: 412, a gone upload, other 4xx than 408, 409, 423, 429 and 460.
    static func check(_ response: UploadResponse, during what: String, url: URL) throws {
        switch response.status {
        case 412:
            throw ResumableUploadError.protocolUnsupported(status: 412, detail: "it speaks tus \(response.headers[.tusVersion] ?? "of another version")")
        case 404, 410:
            throw ResumableUploadError.uploadGone(url: url.absoluteString)
        case 400..<500 where ![408, 409, 423, 429, 460].contains(response.status):
            throw ResumableUploadError.unexpectedStatus(response.status, during: what, bodyPrefix: response.bodyPrefix)
        default:
            return
        }
    }

    /// ``digest(of:with:)`` computed in a task of its own.
    static func digestTask(of plan: BodyPlan, with algorithm: TusChecksumAlgorithm) -> Task<String, any Error> {
        Task { try await digest(of: plan, with: algorithm) }
    }

    /// The digest of `plan`'s bytes, read as it would be sent (a file region from its
    /// place), in base64 as `Upload-Checksum` carries it. The file reads (and the hashing)
    /// run on the encoders' blocking-I/O threads, never on the Swift concurrency pool: a
    /// slow or stalled disk blocks one of those, not a thread every other task needs.
    static func digest(of plan: BodyPlan, with algorithm: TusChecksumAlgorithm) async throws -> String {
        try await BlockingIOExecutor.run { try await hash(plan, with: algorithm) }
    }

    private static func hash(_ plan: BodyPlan, with algorithm: TusChecksumAlgorithm) async throws -> String {
        let reader = plan.makeChunkReader(chunkSize: 1 << 20)
        switch algorithm {
        case .sha256:
            var hasher = SHA256Hasher()
            while let chunk = try await reader.next() {
                try Task.checkCancellation()
                chunk.withUnsafeBytes { hasher.update(bufferPointer: $0) }
            }
            return Data(hasher.finalize()).base64EncodedString()
        case .sha1:
            var hasher = SHA1Hasher()
            while let chunk = try await reader.next() {
                try Task.checkCancellation()
                chunk.withUnsafeBytes { hasher.update(bufferPointer: $0) }
            }
            return Data(hasher.finalize()).base64EncodedString()
        }
    }
}
