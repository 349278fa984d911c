import FormPostReceiving
import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Credentials from the container's endpoint (ECS tasks, EKS Pod Identity):
/// `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` under `http://169.254.170.2`, or
/// `AWS_CONTAINER_CREDENTIALS_FULL_URI`, with the `Authorization` token of
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read again for each fetch) or
/// `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
struct S3ContainerCredentials: S3CredentialsProvider {
    let url: String
    let tokenFile: String?
    let token: String?

    var source: String { "the container's endpoint \(url)" }

    /// Whether a full URI may be asked over plain HTTP: only on this machine or at the
    /// addresses of ECS and EKS, as AWS's SDKs allow.
    static func allows(_ url: String) -> Bool {
        if url.lowercased().hasPrefix("https://") { return true }
        guard url.lowercased().hasPrefix("http://") else { return false }
        let host = S3RoleCredentials.authority(of: url)
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
        return name == "localhost" || name.hasPrefix("127.") || name == "[::1]" || name == "169.254.170.2" || name == "169.254.170.23"
            || name.lowercased() == "[fd00:ec2::23]"
    }

    func fetch() async throws -> S3Credentials {
        var request = HTTPClientRequest(url: url)
        if let tokenFile {
            guard let value = try? String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) else {
                throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the token file \(tokenFile) cannot be read")
            }
            request.headers.add(name: "authorization", value: value)
        } else if let token {
            request.headers.add(name: "authorization", value: token)
        }
        let answer = try await S3CredentialsRequest.send(request, source: source)
        guard answer.status == 200 else {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "answered \(answer.status): \(answer.body.prefix(200))")
        }
        return try S3CredentialsRequest.credentials(fromJSON: answer.body, source: source)
    }
}
