import FormPostReceiving
import AsyncHTTPClient
import NIOCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request to a credential service (STS, the container's endpoint, the instance's
/// metadata), sent with ``ObjectStorage/defaultClient`` or the client given (no redirect
/// followed) up to `attempts` times while it cannot connect or is answered 5xx or 429, each
/// within `timeout`.
enum S3CredentialsRequest {
    /// An answer: its status and body (at most 1 MiB).
    struct Answer {
        let status: Int
        let body: String
    }

    /// `request` sent with `client` for `source` (named in the error), up to `attempts`
    /// times while no answer comes, or it is 5xx, 429, or a 400 whose XML error's code is
    /// one of `retriedCodes` (STS's throttling, as AWS's SDKs retry it).
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)` when no answer
    ///   came, or the last was 5xx or 429 (or a retried code).
    static func send(_ request: HTTPClientRequest, source: String, attempts: Int = 3, timeout: TimeAmount = .seconds(5),
                     retriedCodes: Set<String> = [], client: HTTPClient = ObjectStorage.defaultClient) async throws -> Answer {
        var detail = ""
        for attempt in 1...attempts {
            if attempt > 1 { try await Task.sleep(for: .milliseconds(Int64.random(in: 50...(100 << attempt)))) }
            do {
                let response = try await client.execute(request, timeout: timeout)
                let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
                let status = Int(response.status.code)
                let retriedCode = status == 400 ? S3XML.text(of: "Code", in: body).flatMap { retriedCodes.contains($0) ? $0 : nil } : nil
                guard status >= 500 || status == 429 || retriedCode != nil else { return Answer(status: status, body: body) }
                detail = "answered \(status)" + (retriedCode.map { " (\($0))" } ?? "")
            } catch {
                detail = String(describing: error)
            }
        }
        throw ObjectStorageError.credentialsUnavailable(source: source, detail: detail)
    }

    /// The fields of the JSON credentials the container's endpoint, the instance's metadata
    /// and a `credential_process` hand out.
    struct JSONCredentials: Decodable {
        let AccessKeyId: String
        let SecretAccessKey: String
        let Token: String?
        let SessionToken: String?
        let Expiration: String?
        /// `credential_process`'s output format, which must be 1.
        let Version: Int?
    }

    /// The credentials of a JSON answer, for `source` (with `Version` 1 when `versioned`,
    /// as `credential_process` must print).
    static func credentials(fromJSON body: String, source: String, versioned: Bool = false) throws -> S3Credentials {
        guard let json = try? JSONDecoder().decode(JSONCredentials.self, from: Data(body.utf8)) else {
            // Never the answer itself: it may hold a secret.
            throw ObjectStorageError.credentialsUnavailable(
                source: source, detail: "the answer (\(body.utf8.count) bytes) is not JSON with AccessKeyId, SecretAccessKey and a string Expiration")
        }
        if versioned, json.Version != 1 {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the output's Version is \(json.Version.map(String.init) ?? "missing"), not 1")
        }
        return S3Credentials(accessKeyID: json.AccessKeyId, secretAccessKey: json.SecretAccessKey, sessionToken: json.Token ?? json.SessionToken,
                             expiration: try json.Expiration.map { try date($0, source: source) })
    }

    /// An ISO 8601 date (`2026-11-28T18:30:05Z`, with or without fractions of seconds).
    static func date(_ text: String, source: String) throws -> Date {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: text.contains(".")).parse(text) { return date }
        throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the expiration \(text) is no date")
    }
}
