import FormPostReceiving
import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Credentials of an EC2 instance's role, from its metadata service with IMDSv2: a session
/// token first (`PUT /latest/api/token`), then the role's name and its credentials. At
/// `AWS_EC2_METADATA_SERVICE_ENDPOINT`, else `http://169.254.169.254`; each request within a
/// second, as AWS's SDKs wait (a machine that is no instance answers nothing). As AWS's SDKs,
/// when no token is had (the service answers 403, 404 or 405, or does not answer the `PUT`:
/// IMDSv1 only, or a container one hop too far for the token's answer), the role is asked
/// for without one (IMDSv1) — unless `AWS_EC2_METADATA_V1_DISABLED` is `true`.
struct S3InstanceCredentials: S3CredentialsProvider {
    let endpoint: String
    /// Whether IMDSv1 is refused (`AWS_EC2_METADATA_V1_DISABLED`): no token, no credentials.
    var v1Disabled = false

    var source: String { "the instance's metadata at \(endpoint)" }

    /// What was looked for before the instance's metadata, for the error when it answers nothing.
    static let othersLookedFor = """
        ; nor were credentials found in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the profile (AWS_PROFILE) of the shared \
        config and credentials files, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, or AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI
        """

    func fetch() async throws -> S3Credentials {
        let token = try await sessionToken()
        let base = endpoint + "/latest/meta-data/iam/security-credentials/"
        let role = try await get(base, token: token).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !role.isEmpty else { throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the instance has no role") }
        return try S3CredentialsRequest.credentials(fromJSON: try await get(base + role, token: token), source: source)
    }

    /// The IMDSv2 session token, or nil to go on with IMDSv1 (the service gave none).
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)` when it gave
    ///   none and IMDSv1 is disabled, or it refused the request (400).
    private func sessionToken() async throws -> String? {
        var request = HTTPClientRequest(url: endpoint + "/latest/api/token")
        request.method = .PUT
        request.headers.add(name: "x-aws-ec2-metadata-token-ttl-seconds", value: "21600")
        let answer: S3CredentialsRequest.Answer
        do {
            answer = try await send(request)
        } catch let failure as ObjectStorageError {
            guard !v1Disabled else { throw failure }
            return nil
        }
        if answer.status == 200 { return answer.body }
        guard [403, 404, 405].contains(answer.status), !v1Disabled else {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "answered \(answer.status) to the request of a token"
                                                                + (v1Disabled ? " (and AWS_EC2_METADATA_V1_DISABLED refuses IMDSv1)" : ""))
        }
        return nil
    }

    private func get(_ url: String, token: String?) async throws -> String {
        var request = HTTPClientRequest(url: url)
        if let token { request.headers.add(name: "x-aws-ec2-metadata-token", value: token) }
        let answer = try await send(request)
        guard answer.status == 200 else {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "answered \(answer.status) to \(url)")
        }
        return answer.body
    }

    /// `request` sent (within a second, twice at most).
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)` when nothing
    ///   answered: the last source looked at, it says which came before it.
    private func send(_ request: HTTPClientRequest) async throws -> S3CredentialsRequest.Answer {
        do {
            return try await S3CredentialsRequest.send(request, source: source, attempts: 2, timeout: .seconds(1))
        } catch ObjectStorageError.credentialsUnavailable(let source, let detail) {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: detail + Self.othersLookedFor)
        }
    }
}
