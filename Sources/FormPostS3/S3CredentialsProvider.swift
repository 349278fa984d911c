/// Where credentials come from when they are temporary and must be had again before they
/// expire: a role (STS), the container's endpoint, the instance's metadata, a command.
package protocol S3CredentialsProvider: Sendable {
    /// The source, for the start-up line and errors (`web identity: role ARN`); never a secret.
    var source: String { get }

    /// Credentials fetched now.
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)`.
    func fetch() async throws -> S3Credentials
}
