import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where AWS's SDKs look for credentials, in their order:
/// 1. the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`);
/// 2. the profile `AWS_PROFILE` (else `default`) of the shared config file (`AWS_CONFIG_FILE`,
///    else `~/.aws/config`, `[profile NAME]`) and credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
///    else `~/.aws/credentials`, `[NAME]`; its values win): a role (`role_arn` with
///    `web_identity_token_file` or `source_profile`), else web identity from the environment
///    (`AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`), else the profile's keys, else its
///    `credential_process`;
/// 3. the container's endpoint (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`);
/// 4. the EC2 instance's metadata (IMDSv2, else IMDSv1 unless `AWS_EC2_METADATA_V1_DISABLED`
///    is `true`), unless `AWS_EC2_METADATA_DISABLED` is `true`.
///
/// The region comes from `AWS_REGION`, else `AWS_DEFAULT_REGION`.
package enum S3CredentialsLookup {
    /// Credentials as found: long-term keys, or a provider of temporary ones.
    package enum Resolved: Sendable {
        /// Keys that do not change.
        case keys(Found)
        /// Credentials fetched, and fetched again before they expire.
        case provider(any S3CredentialsProvider)

        /// Where they come from, for the start-up line.
        package var source: String {
            switch self {
            case .keys(let found): found.source
            case .provider(let provider): provider.source
            }
        }
    }

    /// The credentials `environment` leads to, the shared files read with `readFile` (which
    /// returns nil for a file that is not there); nil only when the instance's metadata is
    /// disabled and nothing else names any. STS is asked in `region`.
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)` for a profile
    ///   named that is in neither file, a role it cannot assume (`credential_source`, a
    ///   chained role), or an SSO profile — rather than the next source's credentials,
    ///   which would be another identity's.
    package static func resolve(environment: [String: String], region: String, readFile: (String) -> String?) throws -> Resolved? {
        if let key = nonEmpty(environment["AWS_ACCESS_KEY_ID"]), let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"]) {
            return .keys(Found(credentials: S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"])),
                               source: "environment"))
        }
        let profileName = nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        let profile = profileValues(profileName, environment: environment, readFile: readFile)
        let sts = nonEmpty(environment["AWS_ENDPOINT_URL_STS"]) ?? nonEmpty(environment["AWS_ENDPOINT_URL"]) ?? "https://sts.\(region).amazonaws.com"
        let sessionName = nonEmpty(environment["AWS_ROLE_SESSION_NAME"]) ?? nonEmpty(profile.values["role_session_name"])
            ?? "formpost-\(Int(Date().timeIntervalSince1970))"
        let source = "the profile \(profileName)"
        if let named = nonEmpty(environment["AWS_PROFILE"]), profile.values.isEmpty {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "AWS_PROFILE=\(named) names no profile of the shared config or credentials file")
        }
        if let role = nonEmpty(profile.values["role_arn"]) {
            if let tokenFile = nonEmpty(profile.values["web_identity_token_file"]) {
                return .provider(S3RoleCredentials(roleARN: role, sessionName: sessionName, assumption: .webIdentity(tokenFile: tokenFile),
                                                   endpoint: sts, region: region))
            }
            if let sourceName = nonEmpty(profile.values["source_profile"]) {
                let source = profileValues(sourceName, environment: environment, readFile: readFile)
                if let keys = keys(in: source.values) {
                    return .provider(S3RoleCredentials(roleARN: role, sessionName: sessionName,
                                                       assumption: .sourceCredentials(keys, from: "the profile \(sourceName)"), endpoint: sts, region: region))
                }
            }
            throw ObjectStorageError.credentialsUnavailable(
                source: source, detail: "its role_arn needs web_identity_token_file, or source_profile naming a profile with keys (credential_source and chained roles are not read)")
        }
        if keys(in: profile.values) == nil, profile.values.keys.contains(where: { $0.hasPrefix("sso_") }) {
            throw ObjectStorageError.credentialsUnavailable(
                source: source, detail: "SSO profiles are not read: set credential_process = aws configure export-credentials --profile \(profileName) --format process")
        }
        if let tokenFile = nonEmpty(environment["AWS_WEB_IDENTITY_TOKEN_FILE"]), let role = nonEmpty(environment["AWS_ROLE_ARN"]) {
            return .provider(S3RoleCredentials(roleARN: role, sessionName: sessionName, assumption: .webIdentity(tokenFile: tokenFile), endpoint: sts, region: region))
        }
        if let keys = keys(in: profile.values) {
            return .keys(Found(credentials: keys, source: "profile \(profileName) in \(profile.where)"))
        }
        if let command = nonEmpty(profile.values["credential_process"]) {
            #if os(macOS) || os(Linux)
            return .provider(S3ProcessCredentials(command: command, profile: profileName))
            #else
            _ = command
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "credential_process cannot be run on this platform")
            #endif
        }
        let tokenFile = nonEmpty(environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"])
        let token = nonEmpty(environment["AWS_CONTAINER_AUTHORIZATION_TOKEN"])
        if let relative = nonEmpty(environment["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"]) {
            return .provider(S3ContainerCredentials(url: "http://169.254.170.2" + relative, tokenFile: tokenFile, token: token))
        }
        if let full = nonEmpty(environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"]), S3ContainerCredentials.allows(full) {
            return .provider(S3ContainerCredentials(url: full, tokenFile: tokenFile, token: token))
        }
        guard environment["AWS_EC2_METADATA_DISABLED"]?.lowercased() != "true" else { return nil }
        var endpoint = nonEmpty(environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"]) ?? "http://169.254.169.254"
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return .provider(S3InstanceCredentials(endpoint: endpoint, v1Disabled: environment["AWS_EC2_METADATA_V1_DISABLED"]?.lowercased() == "true"))
    }

    /// The values of the profile `name`: its section of the config file (`[profile NAME]`,
    /// or `[default]`) with those of its section of the credentials file (`[NAME]`) over
    /// them, and where they were read.
    private static func profileValues(_ name: String, environment: [String: String], readFile: (String) -> String?) -> (values: [String: String], where: String) {
        let home = nonEmpty(environment["HOME"])
        var values: [String: String] = [:]
        var places: [String] = []
        if let path = nonEmpty(environment["AWS_CONFIG_FILE"]) ?? home.map({ $0 + "/.aws/config" }), let text = readFile(path) {
            let found = profileValues(name == "default" ? "default" : "profile " + name, in: text)
            if !found.isEmpty { places.append(path) }
            values.merge(found) { _, new in new }
        }
        if let path = nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? home.map({ $0 + "/.aws/credentials" }), let text = readFile(path) {
            let found = profileValues(name, in: text)
            if !found.isEmpty { places.append(path) }
            values.merge(found) { _, new in new }
        }
        return (values, places.joined(separator: " and "))
    }

    /// The PEM file of CA certificates AWS's SDKs trust for their TLS connections to the
    /// store and to STS, and what names it: `AWS_CA_BUNDLE`, else the `ca_bundle` of the
    /// profile `AWS_PROFILE` (else `default`) in the shared files (read with `readFile`;
    /// the credentials file's section wins, as in botocore); nil for the system's trust.
    package static func caBundle(environment: [String: String], readFile: (String) -> String?) -> (path: String, namedBy: String)? {
        if let bundle = nonEmpty(environment["AWS_CA_BUNDLE"]) { return (bundle, "AWS_CA_BUNDLE") }
        let name = nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        let profile = profileValues(name, environment: environment, readFile: readFile)
        return nonEmpty(profile.values["ca_bundle"]).map { ($0, "ca_bundle of the profile \(name) in \(profile.where)") }
    }

    /// The long-term keys among a profile's values.
    private static func keys(in values: [String: String]) -> S3Credentials? {
        guard let key = nonEmpty(values["aws_access_key_id"]), let secret = nonEmpty(values["aws_secret_access_key"]) else { return nil }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty(values["aws_session_token"]))
    }

    /// What was found, and where, for a message that says which source was used.
    package struct Found: Sendable, Equatable {
        /// The credentials.
        package let credentials: S3Credentials
        /// `environment`, or `profile NAME in PATH`.
        package let source: String
    }

    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    package static func region(environment: [String: String]) -> String? {
        nonEmpty(environment["AWS_REGION"]) ?? nonEmpty(environment["AWS_DEFAULT_REGION"])
    }

    /// The `name = value` lines of the section `[profile]` of an INI text (keys in lower
    /// case; `#` and `;` begin comments on lines of their own).
    static func profileValues(_ profile: String, in text: String) -> [String: String] {
        var values: [String: String] = [:]
        var inProfile = false
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = S3Whitespace.trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                inProfile = S3Whitespace.trimmed(line.dropFirst().dropLast()) == profile
                continue
            }
            guard inProfile, let equals = line.firstIndex(of: "=") else { continue }
            let name = S3Whitespace.trimmed(line[..<equals]).lowercased()
            values[name] = S3Whitespace.trimmed(line[line.index(after: equals)...])
        }
        return values
    }


    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
