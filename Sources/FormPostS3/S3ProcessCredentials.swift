#if os(macOS) || os(Linux)
import FormPostReceiving
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Credentials a command prints (`credential_process` in a profile): run with `/bin/sh -c`
/// (`posix_spawn`), its standard input `/dev/null`, waited for on a thread of NIO's blocking
/// pool (never one of Swift's concurrency pool); its standard output JSON with `Version` 1,
/// `AccessKeyId`, `SecretAccessKey`, and for temporary credentials `SessionToken` and
/// `Expiration`. Run again before they expire; a command still running after ``timeout``
/// is killed and fails. On macOS and Linux (where processes can be started).
struct S3ProcessCredentials: S3CredentialsProvider {
    let command: String
    let profile: String

    /// How long the command may run.
    static let timeout: Duration = .seconds(60)

    var source: String { "credential_process of the profile \(profile)" }

    func fetch() async throws -> S3Credentials {
        let (command, source) = (command, source)
        let (status, output) = try await NIOThreadPool.singleton.runIfActive { try Self.run(command, source: source) }
        guard status == 0 else {
            throw ObjectStorageError.credentialsUnavailable(
                source: source, detail: status < 0 ? "the command was killed after \(Self.timeout) or by a signal" : "the command exited with \(status)")
        }
        return try S3CredentialsRequest.credentials(fromJSON: String(decoding: output, as: UTF8.self), source: source, versioned: true)
    }

    /// Runs `command`, blocking: its exit status (negative when a signal ended it) and what
    /// it printed (at most 1 MiB).
    private static func run(_ command: String, source: String) throws -> (Int32, [UInt8]) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ObjectStorageError.credentialsUnavailable(source: source, detail: "pipe failed: errno \(errno)") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        #if os(macOS)
        var actions: posix_spawn_file_actions_t?
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO)
        let words: [String] = ["/bin/sh", "-c", command]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environment.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, "/bin/sh", &actions, nil, argv, environment)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw ObjectStorageError.credentialsUnavailable(source: source, detail: "the command could not be started: errno \(spawned)")
        }
        let pid = child
        let deadline = Task {
            try await Task.sleep(for: timeout)
            kill(pid, SIGKILL)
        }
        defer { deadline.cancel() }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while output.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count > 0 { output += buffer[..<count] } else if count == 0 || errno != EINTR { break }
        }
        close(ends[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import as functions.
        return status & 0x7f == 0 ? ((status >> 8) & 0xff, output) : (-1, output)
    }
}
#endif
