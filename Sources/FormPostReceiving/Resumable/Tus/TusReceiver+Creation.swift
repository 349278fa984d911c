#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import ResumableHTTP

/// Creating a tus upload: its length declared or deferred (creation-defer-length), and
/// its first bytes in the creating request itself (creation-with-upload).
extension TusReceiver {
    /// `POST`: creates an upload for `client` (its address), with the metadata its
    /// authorization `granted`, if `UploadAdmission` takes it. A body sent as
    /// `application/offset+octet-stream` is the upload's first bytes, appended as a `PATCH`
    /// at offset 0 would be, and the answer tells the offset reached; when that append
    /// fails, its failure is answered with the new upload's `Location`, to resume from.
    func create(_ request: ReceiverRequest, client: String?, granted: [String: String]?) async throws -> ReceiverResponse {
        let metadata = request.headers[.uploadMetadata]
        if let metadata, !Self.isValidMetadata(metadata) {
            throw TusFailure(.badRequest, "Upload-Metadata is not a list of distinct keys and base64 values")
        }
        let carriesData = request.headers[.contentType]?.lowercased() == "application/offset+octet-stream"
        var concat: TusConcatenation?
        if let field = request.headers[.uploadConcat] {
            guard let read = TusConcatenation(field: field, basePath: basePath) else {
                throw TusFailure(.badRequest, "Upload-Concat is partial, or final; and the partial uploads' URLs under \(basePath), each once")
            }
            if case .final(let partials) = read {
                guard !carriesData else { throw TusFailure(.badRequest, "a final upload takes no data: its bytes are its partial uploads'") }
                return try await createFinal(joining: partials, metadata: metadata, client: client, granted: granted, in: storage)
            }
            concat = read
        }
        let length = try Self.creationLength(request.headers, maxSize: maxSize)
        let expected = carriesData ? try request.headers[.uploadChecksum].map(Self.expectedChecksum) : nil
        if carriesData, let declared = request.headers[.contentLength].flatMap(Int64.init), declared > length ?? maxSize {
            throw TusFailure(.contentTooLarge, "\(declared) bytes exceed \(length.map { "Upload-Length \($0)" } ?? "the limit of \(maxSize) bytes")")
        }
        let info = TusUploadInfo(length: length, metadata: metadata, created: Date().timeIntervalSince1970, client: client, granted: granted,
                                 concat: concat)
        return try await create(info, data: carriesData ? request : nil, expected: expected, client: client, in: storage)
    }

    /// A new upload of `info` in `uploads` for `client`, if its admission limits take it; the
    /// first bytes of the upload `data`'s body, its checksum `expected` (creation-with-upload),
    /// or, with none and a length of 0, the upload stored at once.
    ///
    /// - Throws: ``TusFailure`` 503 past a limit; ``TusCreatedUploadFailure`` when the first
    ///   bytes could not be appended.
    func create(_ info: TusUploadInfo, data: ReceiverRequest?, expected: (algorithm: TusChecksumAlgorithm, digest: String)?, client: String?,
                in uploads: some UploadStorage<TusUploadInfo>) async throws -> ReceiverResponse {
        let expires = HTTPDate.string(secondsSince1970: uploads.expires(new: info))
        guard data != nil || info.completes(at: 0) else {
            let id = try await admitted { try await uploads.create(info, client: client) }
            ReceiverMetrics.upload(.tus, .created)
            return ReceiverResponse(status: .created, headers: [.location: basePath + "/" + id, .uploadExpires: expires])
        }
        return try await admitted {
            try await uploads.creating(info, client: client, claim: .refusedWhileHeld) { id, hold in
                ReceiverMetrics.upload(.tus, .created)
                let location = basePath + "/" + id
                var response = ReceiverResponse(status: .created, headers: [.location: location, .uploadExpires: expires])
                if let data {
                    response.headers[.uploadOffset] = try await appendingFirstBytes(at: location) {
                        try await appendHeld(data, id: id, claimed: 0, expected: expected, in: uploads, holding: hold).0
                    }
                } else {
                    _ = try await uploads.finish(try await uploads.current(id, holding: hold, finishing: true), id: id, holding: hold)
                }
                return response
            }
        }
    }

    /// What `create` returns, its refusal by the admission limits answered 503.
    func admitted<T>(_ create: () async throws -> T) async throws -> T {
        do {
            return try await create()
        } catch let refusal as UploadAdmission.Refusal {
            throw TusFailure(.serviceUnavailable, refusal.message)
        }
    }

    /// Runs `append`, the first bytes of the upload created at `location`; the offset it
    /// answers.
    ///
    /// - Throws: ``TusCreatedUploadFailure`` naming `location` and what `append` threw.
    func appendingFirstBytes(at location: String, _ append: () async throws -> ReceiverResponse) async throws -> String? {
        do {
            return try await append().headers[.uploadOffset]
        } catch {
            throw TusCreatedUploadFailure(location: location, failure: error)
        }
    }

    /// The length a creation declares: its `Upload-Length`, or nil with
    /// `Upload-Defer-Length: 1`.
    ///
    /// - Throws: ``TusFailure`` 400 for neither, both, or a malformed one; 413 past `maxSize`.
    static func creationLength(_ headers: HTTPFields, maxSize: Int64) throws -> Int64? {
        let deferred = headers[.uploadDeferLength]
        guard let text = headers[.uploadLength] else {
            guard deferred == "1" else {
                throw TusFailure(.badRequest, deferred == nil ? "Upload-Length is missing (or Upload-Defer-Length: 1, for a length not known yet)"
                                                              : "Upload-Defer-Length is 1 or absent")
            }
            return nil
        }
        guard deferred == nil else { throw TusFailure(.badRequest, "send Upload-Length or Upload-Defer-Length, not both") }
        guard let length = size(text) else { throw TusFailure(.badRequest, "Upload-Length is not a size") }
        guard length <= maxSize else { throw TusFailure(.contentTooLarge, "the upload exceeds the limit of \(maxSize) bytes") }
        return length
    }

    /// The length an append's `Upload-Length` declares for an upload (`info`) whose length
    /// was deferred, now at `offset`; nil when there is nothing to declare (no field, or
    /// the length it already has).
    ///
    /// - Throws: ``TusFailure`` 400 for a malformed length, one below the offset, or one
    ///   other than the upload's; 413 past `maxSize`.
    static func lengthDeclared(by headers: HTTPFields, for info: TusUploadInfo, at offset: Int64, maxSize: Int64) throws -> Int64? {
        guard let text = headers[.uploadLength] else { return nil }
        guard let length = size(text) else { throw TusFailure(.badRequest, "Upload-Length is not a size") }
        if let known = info.length {
            guard known == length else { throw TusFailure(.badRequest, "the upload's length is \(known), not \(length)") }
            return nil
        }
        guard length >= offset else { throw TusFailure(.badRequest, "Upload-Length \(length) is below the offset \(offset)") }
        guard length <= maxSize else { throw TusFailure(.contentTooLarge, "the upload exceeds the limit of \(maxSize) bytes") }
        return length
    }

    /// The 413 for an append past the upload's length, or past `maxSize` while its length
    /// is deferred: `declared` bytes at `offset` when a `Content-Length` told it first.
    static func overflow(_ info: TusUploadInfo, declared: Int64? = nil, at offset: Int64? = nil, maxSize: Int64) -> TusFailure {
        let bound = info.length.map { "Upload-Length \($0)" } ?? "the limit of \(maxSize) bytes"
        guard let declared, let offset else { return TusFailure(.contentTooLarge, "the append goes past \(bound)") }
        return TusFailure(.contentTooLarge, "\(declared) bytes at offset \(offset) exceed \(bound)")
    }

    /// The answer to `HEAD` of an upload at `offset`, which expires at `expires`: its offset
    /// (but a final upload's before it is joined, which has none), its length (or
    /// `Upload-Defer-Length: 1` while it is deferred; a final upload's only once known), its
    /// metadata, and its part in a concatenation (partial uploads named under `basePath`).
    static func headAnswer(_ info: TusUploadInfo, offset: Int64, expires: String, basePath: String) -> ReceiverResponse {
        var headers: HTTPFields = [.cacheControl: "no-store", .uploadExpires: expires]
        if !info.isAwaiting(at: offset) { headers[.uploadOffset] = String(offset) }
        if let concat = info.concat { headers[.uploadConcat] = concat.field(basePath: basePath) }
        if let length = info.length {
            headers[.uploadLength] = String(length)
        } else if info.concat == nil || info.concat == .partial {
            headers[.uploadDeferLength] = "1"
        }
        if let metadata = info.metadata { headers[.uploadMetadata] = metadata }
        return ReceiverResponse(status: .ok, headers: headers)
    }

    /// A size as tus writes one: decimal digits alone.
    static func size(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }
}

/// The first bytes of an upload its creating request carried could not all be appended:
/// the upload exists at ``location``, and ``failure`` says what went wrong.
struct TusCreatedUploadFailure: Error {
    /// The new upload's path.
    let location: String
    /// What the append threw.
    let failure: any Error
}
