import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Testing

/// `-o PATH` writes through PATH as curl does; it never replaces what PATH names. Each kind
/// of target is made by the test itself, never the system's.
@Suite("formpost -o writes through its target")
struct OutputTargetTests {
    /// A target `-o` writes into, and what it must still be afterwards.
    enum Target: String, CaseIterable, CustomTestStringConvertible {
        case existingFile, symbolicLink, fifo, characterDevice, missingFile
        var testDescription: String { rawValue }
    }

    /// What a run left behind, read once the command ended.
    struct Outcome {
        let status: Int32
        let stderr: String
        let received: Data?
        let isCharacterDevice: Bool
        let isSymbolicLink: Bool
        let isFIFO: Bool
    }

    /// The targets tried: every one on Linux, where CI runs the tests as root (as another
    /// user the device node fails, saying so); elsewhere the device node only as root, which
    /// the macOS runner is not (`mknod` of a device needs root).
    static let targets = Platform.isLinux || geteuid() == 0 ? Target.allCases : Target.allCases.filter { $0 != .characterDevice }

    /// The body `formpost encode -F a=1 --boundary B` writes.
    static let encodedBody = Data("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--B--\r\n".utf8)

    @Test("encode -o", arguments: targets)
    func encode(_ target: Target) async throws {
        let outcome = try await run(target) { path in ["encode", "-F", "a=1", "--boundary", "B", "-o", path] }
        #expect(outcome.status == 0, "\(outcome.stderr)")
        try check(outcome, target, expected: Self.encodedBody)
    }

    @Test("upload -o", arguments: targets)
    func upload(_ target: Target) async throws {
        let server = try TestServer()
        let query = "status=200&type=text/plain&body64=" + Data("the answer".utf8).base64EncodedString()
        let outcome = try await server.run { base in
            try await self.run(target) { path in ["-s", "-F", "a=1", "-o", path, base.absoluteString + "/reply?" + query] }
        }
        #expect(outcome.status == 0, "\(outcome.stderr)")
        try check(outcome, target, expected: Data("the answer".utf8))
    }

    @Test("encode without -o writes to standard output when it is not a terminal")
    func encodeDefaultsToStandardOutput() throws {
        let result = try formpost(["encode", "-F", "a=1", "--boundary", "B"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == Self.encodedBody)
        #expect(result.stderr.hasPrefix("Content-Type: multipart/form-data; boundary=B\n"))
    }

    @Test("an -o that cannot be opened exits 23 and says why")
    func unwritable() throws {
        let directory = try SampleDirectory()
        let result = try formpost(["encode", "-F", "a=1", "-o", directory.path + "/missing/dir/body"])
        #expect(result.status == 23)
        #expect(result.stderr.contains("cannot write \(directory.path)/missing/dir/body: No such file or directory"))
    }

    private func check(_ outcome: Outcome, _ target: Target, expected: Data) throws {
        switch target {
        case .characterDevice:
            #expect(outcome.isCharacterDevice, "the device node was replaced")
        case .symbolicLink:
            #expect(outcome.isSymbolicLink, "the link was replaced")
            #expect(outcome.received == expected)
        case .fifo:
            #expect(outcome.isFIFO, "the FIFO was replaced")
            #expect(outcome.received == expected)
        case .existingFile, .missingFile:
            #expect(outcome.received == expected, "an existing file is truncated, then written")
        }
    }

    /// Makes `target` in a new directory, runs the command that `arguments` gives for its
    /// path, and reports what is there afterwards.
    private func run(_ target: Target, _ arguments: (String) -> [String]) async throws -> Outcome {
        let directory = try SampleDirectory()
        let path = directory.path + "/out"
        var readFrom = path
        var fifoReader: Task<Data, any Error>?
        let fifoRead = ReaderEnded()
        switch target {
        case .existingFile:
            try Data(repeating: 0x78, count: 10_000).write(to: URL(fileURLWithPath: path))
        case .symbolicLink:
            readFrom = directory.path + "/target"
            try Data("old content, longer than what replaces it".utf8).write(to: URL(fileURLWithPath: readFrom))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: readFrom)
        case .fifo:
            #expect(mkfifo(path, 0o600) == 0)
            fifoReader = Task { [fifoRead] in
                try await offPool {
                    defer { fifoRead.value.store(true, ordering: .releasing) }
                    return try readToEnd(path)
                }
            }
        case .characterDevice:
            // The null device's numbers (1, 3 on Linux; 3, 2 on macOS), at a path of the test's
            // own (needs root, as CI runs).
            var nullDevice = stat()
            try #require(stat("/dev/null", &nullDevice) == 0)
            let made = mknod(path, S_IFCHR | 0o666, nullDevice.st_rdev)
            try #require(made == 0, "mknod failed (errno \(errno)): run the tests as root")
        case .missingFile:
            break
        }
        let commandArguments = arguments(path)
        let result = try await offPool { try formpost(commandArguments) }
        let received: Data?
        if let fifoReader {
            // Should the command never have opened the FIFO, a writer of ours that comes and
            // goes ends the reader's wait (it then reads nothing) instead of leaving it blocked.
            // The reader may not have opened its end yet (a writer's open then fails with
            // ENXIO and the reader would wait for ever once it does): the writer tries again
            // until the reader has its end or has finished.
            let deadline = ContinuousClock.now + .seconds(120)
            while !fifoRead.value.load(ordering: .acquiring), ContinuousClock.now < deadline {
                let writer = open(path, O_WRONLY | O_NONBLOCK)
                if writer >= 0 {
                    close(writer)
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            received = try await fifoReader.value
        } else {
            received = target == .characterDevice ? nil : FileManager.default.contents(atPath: readFrom)
        }
        var info = stat()
        _ = lstat(path, &info)
        let kind = info.st_mode & S_IFMT
        return Outcome(status: result.status, stderr: result.stderr, received: received,
                       isCharacterDevice: kind == S_IFCHR, isSymbolicLink: kind == S_IFLNK, isFIFO: kind == S_IFIFO)
    }
}

/// Whether a FIFO's reader has finished.
private final class ReaderEnded: Sendable {
    let value = Atomic(false)
}

/// Reads a FIFO to its end (blocks until a writer opens it and closes it).
private func readToEnd(_ path: String) throws -> Data {
    guard let handle = FileHandle(forReadingAtPath: path) else { throw Subprocess.Failure(description: "cannot open \(path)") }
    defer { try? handle.close() }
    return handle.readDataToEndOfFile()
}
