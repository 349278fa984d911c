import FormPostReceiving
import AsyncHTTPClient
import FormPostDigests
import NIOCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Credentials of a role, from AWS STS: `AssumeRoleWithWebIdentity` with the token a file
/// holds (EKS's IRSA, `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`; the file is read
/// again for each fetch, as the platform renews it), or `AssumeRole` signed with the
/// credentials of a source profile (`role_arn` and `source_profile`).
struct S3RoleCredentials: S3CredentialsProvider {
    /// How the role is assumed.
    enum Assumption: Sendable {
        /// With the token in the file at this path.
        case webIdentity(tokenFile: String)
        /// With these long-term credentials (the source profile's).
        case sourceCredentials(S3Credentials, from: String)
    }

    let roleARN: String
    let sessionName: String
    let assumption: Assumption
    /// STS's address: `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL`, else the region's.
    let endpoint: String
    let region: String
    /// The client STS is asked with: ``ObjectStorage/defaultClient``, or one that trusts the
    /// CA bundle AWS's SDKs are given (``asking(with:)``).
    private(set) var client: HTTPClient = ObjectStorage.defaultClient

    /// The same role, STS asked with `client` (one that trusts a CA bundle:
    /// ``ObjectStorage/clients(trustingCABundle:)``).
    func asking(with client: HTTPClient) -> S3RoleCredentials {
        var role = self
        role.client = client
        return role
    }

    var source: String {
        switch assumption {
        case .webIdentity(let file): "web identity (\(file)) for the role \(roleARN) at \(endpoint)"
        case .sourceCredentials(_, let from): "the role \(roleARN) assumed with \(from) at \(endpoint)"
        }
    }

    func fetch() async throws -> S3Credentials {
        var parameters: [(String, String)] = [("Version", "2011-06-15"), ("RoleArn", roleARN), ("RoleSessionName", sessionName)]
        let action: String
        switch assumption {
        case .webIdentity(let file):
            guard let token = (try? String(contentsOfFile: file, encoding: .utf8)).map(S3Whitespace.trimmed), !token.isEmpty else {
                throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the token file \(file) cannot be read")
            }
            action = "AssumeRoleWithWebIdentity"
            parameters.append(("WebIdentityToken", token))
        case .sourceCredentials:
            action = "AssumeRole"
        }
        parameters.insert(("Action", action), at: 0)
        let body = parameters.map { S3URIEncoding.encode($0.0) + "=" + S3URIEncoding.encode($0.1) }.joined(separator: "&")
        var request = HTTPClientRequest(url: endpoint + "/")
        request.method = .POST
        let contentType = ("content-type", "application/x-www-form-urlencoded; charset=utf-8")
        request.headers.add(name: contentType.0, value: contentType.1)
        if case .sourceCredentials(let credentials, _) = assumption {
            let host = Self.authority(of: endpoint)
            request.headers.add(name: "host", value: host)
            let signer = SignatureV4(credentials: credentials, region: region, service: "sts")
            let time = SigningTime(secondsSince1970: Int64(Date().timeIntervalSince1970))
            let hash = SignatureV4.hex(SHA256Hasher.digest(of: Array(body.utf8)))
            for field in signer.fields(method: "POST", host: host, encodedPath: "/", query: [], fields: [contentType], payloadHash: hash, at: time) {
                request.headers.add(name: field.name, value: field.value)
            }
        }
        request.body = .bytes(ByteBuffer(string: body))
        let answer = try await S3CredentialsRequest.send(request, source: source, retriedCodes: Self.retriedCodes, client: client)
        guard answer.status == 200, let key = S3XML.text(of: "AccessKeyId", in: answer.body),
              let secret = S3XML.text(of: "SecretAccessKey", in: answer.body) else {
            let reason = [S3XML.text(of: "Code", in: answer.body), S3XML.text(of: "Message", in: answer.body)].compactMap { $0 }.joined(separator: ": ")
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "STS answered \(answer.status) to \(action)" + (reason.isEmpty ? "" : " (\(reason))"))
        }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: S3XML.text(of: "SessionToken", in: answer.body),
                             expiration: try S3XML.text(of: "Expiration", in: answer.body).map { try S3CredentialsRequest.date($0, source: source) })
    }

    /// STS's refusals sent again, as AWS's SDKs send them again: its throttling
    /// (`Throttling`, answered 400), and a web identity's provider it could not reach.
    static let retriedCodes = ObjectStorageError.throttlingCodes.union(["IDPCommunicationError"])

    /// The host (and port) of an address.
    static func authority(of endpoint: String) -> String {
        let rest = endpoint.firstRange(of: "://").map { endpoint[$0.upperBound...] } ?? endpoint[...]
        return String(rest.prefix { $0 != "/" })
    }
}
