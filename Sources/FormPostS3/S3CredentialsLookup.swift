/// Where the AWS tools look for credentials, in their order: the environment
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then the profile
/// `AWS_PROFILE` (else `default`) of the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
/// else `~/.aws/credentials`); the region from `AWS_REGION`, else `AWS_DEFAULT_REGION`.
package enum S3CredentialsLookup {
    /// What was found, and where, for a message that says which source was used.
    package struct Found: Sendable, Equatable {
        /// The credentials.
        package let credentials: S3Credentials
        /// `environment`, or `profile NAME in PATH`.
        package let source: String
    }

    /// The credentials `environment` names, or those of its profile in the credentials file
    /// (read with `readFile`, which returns nil for a file that is not there); nil when
    /// neither has a key and secret.
    package static func credentials(environment: [String: String], readFile: (String) -> String?) -> Found? {
        if let key = nonEmpty(environment["AWS_ACCESS_KEY_ID"]), let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"]) {
            return Found(credentials: S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"])),
                         source: "environment")
        }
        let profile = nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        guard let path = nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? nonEmpty(environment["HOME"]).map({ $0 + "/.aws/credentials" }),
              let text = readFile(path) else { return nil }
        let values = profileValues(profile, in: text)
        guard let key = nonEmpty(values["aws_access_key_id"]), let secret = nonEmpty(values["aws_secret_access_key"]) else { return nil }
        return Found(credentials: S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty(values["aws_session_token"])),
                     source: "profile \(profile) in \(path)")
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
            let line = trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                inProfile = trimmed(line.dropFirst().dropLast()) == profile
                continue
            }
            guard inProfile, let equals = line.firstIndex(of: "=") else { continue }
            let name = trimmed(line[..<equals]).lowercased()
            values[name] = trimmed(line[line.index(after: equals)...])
        }
        return values
    }

    /// `text` without the spaces and tabs around it.
    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
