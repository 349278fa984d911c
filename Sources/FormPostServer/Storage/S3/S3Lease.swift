#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore

/// A lease on one object-storage key, taken with S3's conditional writes, so that of the
/// receivers sharing a bucket only one works on a resumable upload at a time: the object
/// `key` holds `{"owner": …, "expires": seconds since 1970}`. Taking it writes the object
/// with `If-None-Match: *` (only if there is none); a lease found expired — its holder died
/// or stalled — is taken over with `If-Match` on the ETag read, so that of two receivers
/// taking over at once one wins. It is renewed with `If-Match` on its own ETag and released
/// by deleting it with `If-Match`: a receiver whose lease was taken over cannot renew or
/// release the new holder's. Clocks of the receivers must agree to well within the
/// duration (NTP does).
struct S3Lease: Sendable {
    /// The lease object's key.
    let key: String
    /// The ETag of the lease object this holder wrote.
    let etag: String
    /// When it runs out, in seconds since 1970.
    let expires: Double

    /// What the lease object holds.
    private struct Body: Codable {
        var owner: String
        var expires: Double
    }

    /// Takes the lease `key` for `duration` seconds, or nil when another holder's has not
    /// run out.
    ///
    /// - Throws: ``ObjectStorageError`` when the store fails or refuses otherwise.
    static func take(_ key: String, for duration: Double, with client: S3Client) async throws -> S3Lease? {
        do {
            return try await write(key, for: duration, condition: ("if-none-match", "*"), with: client)
        } catch ObjectStorageError.refused(_, let status, _, _) where status == 412 || status == 409 {
            // Held, or held until lately: taken over only once run out, and only as read.
            let held: S3Client.Answer
            do {
                held = try await client.send(.GET, key: key, what: "reading the lease \(key)", maxAnswerBytes: 4096)
            } catch ObjectStorageError.refused(_, 404, _, _) {
                return nil  // Released meanwhile: the caller is told it is busy and asks again.
            }
            guard let etag = held.etag else { return nil }
            let body = try? JSONDecoder().decode(Body.self, from: Data(held.bytes.readableBytesView))
            guard (body?.expires ?? 0) < Date().timeIntervalSince1970 else { return nil }
            do {
                return try await write(key, for: duration, condition: ("if-match", etag), with: client)
            } catch ObjectStorageError.refused(_, let status, _, _) where status == 412 || status == 409 || status == 404 {
                return nil
            }
        }
    }

    /// The lease renewed for `duration` seconds from now, or nil when it is no longer this
    /// holder's (taken over after it ran out).
    func renewed(for duration: Double, with client: S3Client) async throws -> S3Lease? {
        do {
            return try await Self.write(key, for: duration, condition: ("if-match", etag), with: client)
        } catch ObjectStorageError.refused(_, let status, _, _) where status == 412 || status == 404 {
            return nil
        }
    }

    /// Releases the lease if it is still this holder's; a failure only leaves it to run out.
    func release(with client: S3Client) async {
        let (key, etag) = (key, etag)
        // In a task of its own: the request's may be cancelled, and the release still sent.
        await Task {
            _ = try? await client.send(.DELETE, key: key, fields: [("if-match", etag)], what: "releasing the lease \(key)", attempts: 2)
        }.value
    }

    private static func write(_ key: String, for duration: Double, condition: SignatureV4.Field, with client: S3Client) async throws -> S3Lease {
        let expires = Date().timeIntervalSince1970 + duration
        let body = try JSONEncoder().encode(Body(owner: UploadStore.randomName(), expires: expires))
        let answer = try await client.send(.PUT, key: key, fields: [condition], body: ByteBuffer(bytes: body), what: "taking the lease \(key)", attempts: 2)
        guard let etag = answer.etag else {
            throw ObjectStorageError.refused(what: "taking the lease \(key)", status: answer.status, code: nil, message: "no ETag in the answer")
        }
        return S3Lease(key: key, etag: etag, expires: expires)
    }
}
