import FormPostReceiving
import Foundation

/// Credentials a command prints (`credential_process` in a profile): run with `/bin/sh -c`,
/// its standard output JSON with `Version` 1, `AccessKeyId`, `SecretAccessKey`, and for
/// temporary credentials `SessionToken` and `Expiration`. Run again before they expire.
struct S3ProcessCredentials: S3CredentialsProvider {
    let command: String
    let profile: String

    var source: String { "credential_process of the profile \(profile)" }

    func fetch() async throws -> S3Credentials {
        let (command, source) = (command, source)
        let (status, output) = try await Task.detached { () throws -> (Int32, Data) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            let pipe = Pipe()
            process.standardOutput = pipe
            do {
                try process.run()
            } catch {
                throw ObjectStorageError.credentialsUnavailable(source: source, detail: "\(error)")
            }
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, output)
        }.value
        guard status == 0 else {
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the command exited with \(status)")
        }
        return try S3CredentialsRequest.credentials(fromJSON: String(decoding: output, as: UTF8.self), source: source)
    }
}
