#if os(macOS) || os(Linux)
import FormPostReceiving
import Foundation

/// Credentials a command prints (`credential_process` in a profile): run with `/bin/sh -c`,
/// its standard input empty, on a thread of its own (never one of Swift's concurrency pool);
/// its standard output JSON with `Version` 1, `AccessKeyId`, `SecretAccessKey`, and for
/// temporary credentials `SessionToken` and `Expiration`. Run again before they expire; a
/// command still running after ``timeout`` is ended and fails. On macOS and Linux (where
/// processes can be started).
struct S3ProcessCredentials: S3CredentialsProvider {
    let command: String
    let profile: String

    /// How long the command may run.
    static let timeout: TimeInterval = 60

    var source: String { "credential_process of the profile \(profile)" }

    func fetch() async throws -> S3Credentials {
        let (command, source) = (command, source)
        let (status, output): (Int32, Data) = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", command]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardInput = FileHandle.nullDevice
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: ObjectStorageError.credentialsUnavailable(source: source, detail: "the command did not start: \(error)"))
                    return
                }
                let deadline = DispatchWorkItem { if process.isRunning { process.terminate() } }
                DispatchQueue.global().asyncAfter(deadline: .now() + Self.timeout, execute: deadline)
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                deadline.cancel()
                continuation.resume(returning: (process.terminationReason == .uncaughtSignal ? -1 : process.terminationStatus, output))
            }
        }
        guard status == 0 else {
            throw ObjectStorageError.credentialsUnavailable(
                source: source, detail: status == -1 ? "the command was ended by a signal (after \(Int(Self.timeout)) s, or killed)" : "the command exited with \(status)")
        }
        return try S3CredentialsRequest.credentials(fromJSON: String(decoding: output, as: UTF8.self), source: source, versioned: true)
    }
}
#endif
