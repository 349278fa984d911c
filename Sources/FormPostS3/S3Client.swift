import FormPostReceiving
import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import NIOCore
import NIOHTTP1

/// Requests to an ``ObjectStorage``'s bucket: addressed (path- or virtual-hosted style),
/// signed (Signature Version 4 over the body's SHA-256, or unsigned as AWS's SDKs leave it
/// over TLS: ``payloadHash(of:fields:overTLS:)``; with the credentials of the moment),
/// sent, and sent again as AWS's standard retry mode does (``S3RetryStrategy``).
struct S3Client: Sendable {
    /// An answer of the store: its status, fields and (at most the bytes asked for of) body.
    struct Answer: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let bytes: ByteBuffer

        /// The body as text (the store's XML).
        var body: String { String(buffer: bytes) }
        /// The object's `ETag`, as the store answered it.
        var etag: String? { headers.first(name: "etag") }
    }

    let storage: ObjectStorage
    private let scheme: String
    private let authority: String

    /// How often a request is sent in all while the store fails it transiently: AWS's
    /// standard retry mode's three (``S3RetryStrategy`` decides the pauses).
    static let attempts = 3

    init(storage: ObjectStorage) {
        self.storage = storage
        let parts = storage.endpoint.split(separator: "://", maxSplits: 1)
        scheme = parts.count == 2 ? String(parts[0]).lowercased() : "https"
        let rest = parts.count == 2 ? parts[1] : parts[0]
        let host = String(rest.prefix { $0 != "/" })
        authority = storage.pathStyle ? host : storage.bucket + "." + host
    }

    /// The key's path as sent and signed (the bucket's, without a key).
    private func encodedPath(key: String?) -> String {
        let object = key.map { S3URIEncoding.encode($0, keepingSlash: true) }
        if storage.pathStyle { return "/" + storage.bucket + (object.map { "/" + $0 } ?? "") }
        return "/" + (object ?? "")
    }

    /// A failed attempt, with what its answer said about retrying, and the moment (and the
    /// clock's offset) it was signed with.
    private struct FailedAttempt: Error {
        let failure: ObjectStorageError
        var retryAfter: Duration?
        var serverDate: Date?
        let signed: Signed
    }

    /// A request as addressed and signed, and when, by which clock.
    private struct Signed {
        let request: HTTPClientRequest
        /// The moment in the signature.
        let at: Date
        /// The offset of the store's clock it was signed with.
        let offset: Duration
    }

    /// Sends `method` to `key` (the bucket itself without one) with `query` and `fields`
    /// (unencoded) and `body`, for `what` (said in errors), at most `attempts` times while it
    /// fails transiently (``S3RetryStrategy``: backoff with jitter, `Retry-After`, a clock
    /// corrected, the bucket's retry quota), each within `timeout` (else the storage's
    /// `attemptTimeout`, else 5 minutes; AsyncHTTPClient tries to
    /// connect again and again until then); returns a 2xx answer. With `errorInBody`, a 200
    /// whose body is S3's `<Error>` (as `CompleteMultipartUpload` and `UploadPartCopy` may
    /// answer) fails as that error would. A redirect is never followed: the signature
    /// names the host, and the request's credentials go nowhere else.
    ///
    /// - Throws: `ObjectStorageError/refused(what:status:code:message:)` for any other
    ///   answer (after the retries a transient one gets), `ObjectStorageError/unreachable(what:detail:)`.
    func send(_ method: HTTPMethod, key: String?, query: [SignatureV4.Field] = [], fields: [SignatureV4.Field] = [],
              body: ByteBuffer? = nil, what: String, attempts: Int = S3Client.attempts, timeout: TimeAmount? = nil,
              maxAnswerBytes: Int = 1 << 20, errorInBody: Bool = false) async throws -> Answer {
        let payloadHash = Self.payloadHash(of: body, fields: fields, overTLS: scheme == "https")
        var attempt = 1
        var lastRetryCost: Int?
        let spacedKey = Self.isWriteToObject(method, query: query) ? key : nil
        while true {
            if let spacedKey {
                let wait = storage.keyWrites.turn(for: spacedKey)
                if wait > .zero { try await Task.sleep(for: wait) }
            }
            do {
                let answer = try await sendOnce(method, key: key, query: query, fields: fields, body: body, payloadHash: payloadHash, what: what,
                                                timeout: timeout ?? storage.attemptTimeout ?? .minutes(5), maxAnswerBytes: maxAnswerBytes,
                                                errorInBody: errorInBody)
                storage.retryQuota.succeeded(lastRetryCost: lastRetryCost)
                return answer
            } catch let failed as FailedAttempt {
                if spacedKey != nil, failed.failure.status == 429 { storage.keyWrites.enable() }
                switch S3RetryStrategy.decide(after: failed.failure, attempt: attempt, of: attempts, retryAfter: failed.retryAfter,
                                              serverDate: failed.serverDate, signedAt: failed.signed.at, random: Double.random(in: 0..<1)) {
                case .fail:
                    throw failed.failure
                case .correctClock(let offset):
                    // From the clock this request was signed with: requests refused at once
                    // all adopt the same offset, none adds to another's.
                    storage.clockOffset.adopt(failed.signed.offset + offset)
                case .retry(let delay, let isThrottling):
                    guard let cost = storage.retryQuota.takeRetry(afterThrottling: isThrottling) else { throw failed.failure }
                    lastRetryCost = cost
                    try await Task.sleep(for: delay)
                }
                attempt += 1
            }
        }
    }

    /// How the signature names `body`: `UNSIGNED-PAYLOAD` where AWS's SDKs send it
    /// (botocore 1.44's `S3SigV4Auth`, for a body streamed to S3): over TLS, when the request
    /// carries a checksum of its body that the store checks (a part's
    /// `x-amz-checksum-crc32`, sent only to a store that keeps checksums) — TLS and the
    /// checksum then guard the bytes, and the receiver is spared a SHA-256 pass over each
    /// part. Otherwise (plain HTTP, or no checksum) the body's SHA-256 in hexadecimal.
    static func payloadHash(of body: ByteBuffer?, fields: [SignatureV4.Field], overTLS: Bool) -> String {
        if overTLS, body != nil, fields.contains(where: { $0.name.lowercased() == "x-amz-checksum-crc32" }) {
            return SignatureV4.unsignedPayload
        }
        return SignatureV4.hex(body.map { buffer in
            var hasher = SHA256Hasher()
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            return hasher.finalize()
        } ?? SHA256Hasher.digest(of: []))
    }

    /// Whether `method` with `query` writes the object itself (a `PUT`, a `DELETE`, its tags,
    /// the completion of its multipart upload) rather than a part of it or its listing.
    static func isWriteToObject(_ method: HTTPMethod, query: [SignatureV4.Field]) -> Bool {
        let names = Set(query.map(\.name))
        switch method {
        case .PUT: return !names.contains("partNumber")
        case .DELETE: return !names.contains("uploadId")
        case .POST: return names.contains("uploadId")
        default: return false
        }
    }

    private func sendOnce(_ method: HTTPMethod, key: String?, query: [SignatureV4.Field], fields: [SignatureV4.Field], body: ByteBuffer?,
                          payloadHash: String, what: String, timeout: TimeAmount, maxAnswerBytes: Int, errorInBody: Bool) async throws -> Answer {
        let signed = try await prepared(method, key: key, query: query, fields: fields, body: body, payloadHash: payloadHash)
        let response: HTTPClientResponse
        do {
            response = try await storage.client.execute(signed.request, timeout: timeout)
        } catch {
            throw FailedAttempt(failure: .unreachable(what: what, detail: String(describing: error)), signed: signed)
        }
        let status = Int(response.status.code)
        let bytes: ByteBuffer
        do {
            bytes = try await response.body.collect(upTo: maxAnswerBytes)
        } catch is NIOTooManyBytesError {
            // Not a failure of the moment: the same answer would come again.
            throw ObjectStorageError.refused(what: what, status: status, code: nil, message: "an answer longer than \(maxAnswerBytes) bytes")
        } catch {
            throw FailedAttempt(failure: .unreachable(what: what, detail: String(describing: error)), signed: signed)
        }
        let text = String(buffer: bytes)
        guard (200..<300).contains(status), !(errorInBody && text.contains("<Error>")) else {
            throw FailedAttempt(failure: Self.refusal(what: what, status: status, headers: response.headers, body: text),
                                retryAfter: S3RetryStrategy.retryAfter(milliseconds: response.headers.first(name: "x-amz-retry-after"),
                                                                       response.headers.first(name: "retry-after"), now: Date()),
                                serverDate: response.headers.first(name: "date").flatMap(S3RetryStrategy.httpDate), signed: signed)
        }
        return Answer(status: status, headers: response.headers, bytes: bytes)
    }

    /// The refusal an answer of `status` with `headers` and `body` (S3's XML error) says; a
    /// redirect (S3's `PermanentRedirect` to the bucket's region) says where it pointed.
    private static func refusal(what: String, status: Int, headers: HTTPHeaders, body: String) -> ObjectStorageError {
        var message = S3XML.text(of: "Message", in: body)
        if (300..<400).contains(status) {
            let region = headers.first(name: "x-amz-bucket-region").map { "the bucket is in the region \($0); " } ?? ""
            let location = headers.first(name: "location") ?? S3XML.text(of: "Endpoint", in: body) ?? "another address"
            message = (message.map { $0 + ": " } ?? "") + region + "redirected to \(location), which is not followed (set the store's endpoint or region)"
        }
        return .refused(what: what, status: status, code: S3XML.text(of: "Code", in: body), message: message)
    }

    /// `method` to `key` with `query`, `fields` and `body`, addressed and signed now (once
    /// the credentials are had, by the store's clock as far as it is known).
    private func prepared(_ method: HTTPMethod, key: String?, query: [SignatureV4.Field], fields: [SignatureV4.Field], body: ByteBuffer?,
                          payloadHash: String) async throws -> Signed {
        let path = encodedPath(key: key)
        let signer = SignatureV4(credentials: try await storage.currentCredentials(), region: storage.region)
        let offset = storage.clockOffset.current
        let date = Date().addingTimeInterval(Double(offset.components.seconds) + Double(offset.components.attoseconds) / 1e18)
        let time = SigningTime(secondsSince1970: Int64(date.timeIntervalSince1970))
        let signed = signer.fields(method: method.rawValue, host: authority, encodedPath: path, query: query, fields: fields,
                                   payloadHash: payloadHash, at: time)
        let queryText = query.map { S3URIEncoding.encode($0.name) + "=" + S3URIEncoding.encode($0.value) }.joined(separator: "&")
        var request = HTTPClientRequest(url: scheme + "://" + authority + path + (queryText.isEmpty ? "" : "?" + queryText))
        request.method = method
        request.headers.add(name: "host", value: authority)
        for field in fields + signed { request.headers.add(name: field.name, value: field.value) }
        if let body { request.body = .bytes(body) }
        return Signed(request: request, at: date, offset: offset)
    }

    /// Reads the object `key` from its beginning, handing each buffer to `each` as it
    /// arrives (the object is never held whole), for `what` (said in errors); not retried.
    ///
    /// - Throws: `ObjectStorageError` as ``send(_:key:query:fields:body:what:attempts:timeout:maxAnswerBytes:)``,
    ///   or what `each` throws.
    func read(_ key: String, what: String, timeout: TimeAmount = .minutes(30), each: (ByteBuffer) throws -> Void) async throws {
        let request = try await prepared(.GET, key: key, query: [], fields: [], body: nil, payloadHash: SignatureV4.hex(SHA256Hasher.digest(of: []))).request
        let response: HTTPClientResponse
        do {
            response = try await storage.client.execute(request, timeout: timeout)
        } catch {
            throw ObjectStorageError.unreachable(what: what, detail: String(describing: error))
        }
        guard response.status.code == 200 else {
            let text = String(buffer: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
            throw Self.refusal(what: what, status: Int(response.status.code), headers: response.headers, body: text)
        }
        do {
            for try await buffer in response.body { try each(buffer) }
        } catch let error as ObjectStorageError {
            throw error
        } catch {
            throw ObjectStorageError.unreachable(what: what, detail: String(describing: error))
        }
    }
}
