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

    /// Whether a full URI may be asked: over HTTPS anywhere; over plain HTTP only at a
    /// loopback address (`127.0.0.0/8`, `::1`, `localhost`) or ECS's and EKS's
    /// (`169.254.170.2`, `169.254.170.23`, `fd00:ec2::23`), as AWS's SDKs allow; never with
    /// a user name in the address.
    static func allows(_ url: String) -> Bool {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return false }
        let authority = S3RoleCredentials.authority(of: lowered)
        guard !authority.contains("@") else { return false }
        if lowered.hasPrefix("https://") { return true }
        let host: String
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
        } else {
            host = String(authority.prefix { $0 != ":" })
        }
        if ["localhost", "::1", "169.254.170.2", "169.254.170.23", "fd00:ec2::23"].contains(host) { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    func fetch() async throws -> S3Credentials {
        var request = HTTPClientRequest(url: url)
        if let tokenFile {
            guard let value = (try? String(contentsOfFile: tokenFile, encoding: .utf8)).map(S3Whitespace.trimmed) else {
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
