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
/// second, as AWS's SDKs wait (a machine that is no instance answers nothing).
struct S3InstanceCredentials: S3CredentialsProvider {
    let endpoint: String

    var source: String { "the instance's metadata at \(endpoint)" }

    /// What was looked for before the instance's metadata, for the error when it answers nothing.
    static let othersLookedFor = """
        ; nor were credentials found in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the profile (AWS_PROFILE) of the shared \
        config and credentials files, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, or AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI
        """

    func fetch() async throws -> S3Credentials {
        var tokenRequest = HTTPClientRequest(url: endpoint + "/latest/api/token")
        tokenRequest.method = .PUT
        tokenRequest.headers.add(name: "x-aws-ec2-metadata-token-ttl-seconds", value: "21600")
        let token: S3CredentialsRequest.Answer
        do {
            token = try await S3CredentialsRequest.send(tokenRequest, source: source, attempts: 2, timeout: .seconds(1))
        } catch ObjectStorageError.credentialsUnavailable(let source, let detail) {
            // The last source looked at: say which came before it.
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: detail + Self.othersLookedFor)
        }
        guard token.status == 200 else {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "answered \(token.status) to the request of a token")
        }
        let base = endpoint + "/latest/meta-data/iam/security-credentials/"
        let role = try await get(base, token: token.body).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !role.isEmpty else { throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the instance has no role") }
        return try S3CredentialsRequest.credentials(fromJSON: try await get(base + role, token: token.body), source: source)
    }

    private func get(_ url: String, token: String) async throws -> String {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "x-aws-ec2-metadata-token", value: token)
        let answer = try await S3CredentialsRequest.send(request, source: source, attempts: 2, timeout: .seconds(1))
        guard answer.status == 200 else {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "answered \(answer.status) to \(url)")
        }
        return answer.body
    }
}
