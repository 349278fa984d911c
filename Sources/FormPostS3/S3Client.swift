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
/// signed (Signature Version 4 over the body's SHA-256), sent, and sent again with backoff
/// while the store answers as if busy (`ObjectStorageError/isTransient`).
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
    private let signer: SignatureV4
    private let scheme: String
    private let authority: String

    /// How often a request is sent in all while the store fails it transiently, and the
    /// pause before the second (doubled before each next one).
    static let attempts = 4
    static let firstRetryDelay: Duration = .milliseconds(250)

    init(storage: ObjectStorage) {
        self.storage = storage
        signer = SignatureV4(credentials: S3Credentials(accessKeyID: storage.accessKeyID, secretAccessKey: storage.secretAccessKey,
                                                        sessionToken: storage.sessionToken), region: storage.region)
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

    /// Sends `method` to `key` (the bucket itself without one) with `query` and `fields`
    /// (unencoded) and `body`, for `what` (said in errors), at most `attempts` times while it
    /// fails transiently, each within `timeout` (AsyncHTTPClient tries to connect again and
    /// again until then); returns a 2xx answer.
    ///
    /// - Throws: `ObjectStorageError/refused(what:status:code:message:)` for any other
    ///   answer (after the retries a transient one gets), `ObjectStorageError/unreachable(what:detail:)`.
    func send(_ method: HTTPMethod, key: String?, query: [SignatureV4.Field] = [], fields: [SignatureV4.Field] = [],
              body: ByteBuffer? = nil, what: String, attempts: Int = S3Client.attempts, timeout: TimeAmount = .minutes(5),
              maxAnswerBytes: Int = 1 << 20) async throws -> Answer {
        let payloadHash = SignatureV4.hex(body.map { buffer in
            var hasher = SHA256Hasher()
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            return hasher.finalize()
        } ?? SHA256Hasher.digest(of: []))
        var delay = Self.firstRetryDelay
        var attempt = 1
        while true {
            do {
                return try await sendOnce(method, key: key, query: query, fields: fields, body: body, payloadHash: payloadHash, what: what,
                                          timeout: timeout, maxAnswerBytes: maxAnswerBytes)
            } catch let error as ObjectStorageError where error.isTransient && attempt < attempts {
                try await Task.sleep(for: delay)
                delay *= 2
                attempt += 1
            }
        }
    }

    private func sendOnce(_ method: HTTPMethod, key: String?, query: [SignatureV4.Field], fields: [SignatureV4.Field], body: ByteBuffer?,
                          payloadHash: String, what: String, timeout: TimeAmount, maxAnswerBytes: Int) async throws -> Answer {
        let request = prepared(method, key: key, query: query, fields: fields, body: body, payloadHash: payloadHash)
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await storage.client.execute(request, timeout: timeout)
            bytes = try await response.body.collect(upTo: maxAnswerBytes)
        } catch {
            throw ObjectStorageError.unreachable(what: what, detail: String(describing: error))
        }
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            let text = String(buffer: bytes)
            throw ObjectStorageError.refused(what: what, status: status, code: S3XML.text(of: "Code", in: text), message: S3XML.text(of: "Message", in: text))
        }
        return Answer(status: status, headers: response.headers, bytes: bytes)
    }

    /// `method` to `key` with `query`, `fields` and `body`, addressed and signed now.
    private func prepared(_ method: HTTPMethod, key: String?, query: [SignatureV4.Field], fields: [SignatureV4.Field], body: ByteBuffer?,
                          payloadHash: String) -> HTTPClientRequest {
        let path = encodedPath(key: key)
        let time = SigningTime(secondsSince1970: Int64(Date().timeIntervalSince1970))
        let signed = signer.fields(method: method.rawValue, host: authority, encodedPath: path, query: query, fields: fields,
                                   payloadHash: payloadHash, at: time)
        let queryText = query.map { S3URIEncoding.encode($0.name) + "=" + S3URIEncoding.encode($0.value) }.joined(separator: "&")
        var request = HTTPClientRequest(url: scheme + "://" + authority + path + (queryText.isEmpty ? "" : "?" + queryText))
        request.method = method
        request.headers.add(name: "host", value: authority)
        for field in fields + signed { request.headers.add(name: field.name, value: field.value) }
        if let body { request.body = .bytes(body) }
        return request
    }

    /// Reads the object `key` from its beginning, handing each buffer to `each` as it
    /// arrives (the object is never held whole), for `what` (said in errors); not retried.
    ///
    /// - Throws: `ObjectStorageError` as ``send(_:key:query:fields:body:what:attempts:timeout:maxAnswerBytes:)``,
    ///   or what `each` throws.
    func read(_ key: String, what: String, timeout: TimeAmount = .minutes(30), each: (ByteBuffer) throws -> Void) async throws {
        let request = prepared(.GET, key: key, query: [], fields: [], body: nil, payloadHash: SignatureV4.hex(SHA256Hasher.digest(of: [])))
        let response: HTTPClientResponse
        do {
            response = try await storage.client.execute(request, timeout: timeout)
        } catch {
            throw ObjectStorageError.unreachable(what: what, detail: String(describing: error))
        }
        guard response.status.code == 200 else {
            let text = String(buffer: (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer())
            throw ObjectStorageError.refused(what: what, status: Int(response.status.code), code: S3XML.text(of: "Code", in: text),
                                             message: S3XML.text(of: "Message", in: text))
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
