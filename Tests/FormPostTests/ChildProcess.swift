import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run, spawned with `posix_spawnp` (found on `PATH`).
///
/// Foundation's `Process` on Linux keeps the parent's descriptors out of a child by listing
/// the open ones just before it spawns: a pipe another thread opens in that moment leaks
/// into the child. When that child lives long (nginx), a test reading its own child's output
/// to the end waits as long as nginx lives — and tests running side by side can wait for
/// each other for ever. Here the child closes every descriptor above its standard three as
/// it starts (and the pipes are close-on-exec besides), runs in a process group of its own, and every
/// wait has a deadline past which the group is killed and the test fails with what it printed.
/// Its environment is the test runner's, built from `ProcessInfo` (Swift sees no `environ` on Darwin).
/// Programs start on macOS and Linux only (`posix_spawn` is unavailable on tvOS and watchOS,
/// its `chdir` action on iOS too): elsewhere the initializer throws.
final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's output streams goes.
    enum Output {
        /// Into a pipe, returned by ``finish(timeout:)``.
        case capture
        /// To `/dev/null`.
        case discard
        /// To the test runner's own stream.
        case inherit
        /// To a copy of this descriptor of the test runner's, which stays the runner's to close.
        case descriptor(Int32)
    }

    /// What a child that ended left.
    struct Finished {
        /// The exit status, or 128 + the signal that ended it (as a shell reports it).
        let status: Int32
        let stdout: Data
        let stderr: Data
    }

    /// How long ``finish(timeout:)`` waits unless told otherwise: far beyond any test's need,
    /// and far below the test run's own limit.
    static let defaultTimeout: TimeInterval = 240

    let pid: pid_t
    private let program: String
    private var input: Data
    private var stdinWriter: Int32
    private var stdoutReader: Int32
    private var stderrReader: Int32
    private var exitStatus: Int32?
    private let lock = NSLock()

    /// Starts `program` with `arguments`; `input` is written to its standard input (which is
    /// `/dev/null` when nil), in `directory` when given.
    init(_ program: String, _ arguments: [String], input: Data? = nil, stdout: Output = .capture, stderr: Output = .capture,
         directory: String? = nil) throws {
        self.program = program
        self.input = input ?? Data()
        #if os(macOS) || os(Linux)
        #if os(macOS)
        var actions: posix_spawn_file_actions_t?
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var theirs: [Int32] = []
        defer { theirs.forEach { close($0) } }

        func pipeEnds() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw Subprocess.Failure(description: "pipe failed: errno \(errno)") }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return (ends[0], ends[1])
        }
        if input != nil {
            let ends = try pipeEnds()
            theirs.append(ends.read)
            stdinWriter = ends.write
            posix_spawn_file_actions_adddup2(&actions, ends.read, STDIN_FILENO)
        } else {
            stdinWriter = -1
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        }
        func route(_ output: Output, to descriptor: Int32) throws -> Int32 {
            switch output {
            case .capture:
                let ends = try pipeEnds()
                theirs.append(ends.write)
                posix_spawn_file_actions_adddup2(&actions, ends.write, descriptor)
                return ends.read
            case .discard:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
                return -1
            case .inherit:
                #if os(macOS)
                // Kept open through POSIX_SPAWN_CLOEXEC_DEFAULT (below).
                posix_spawn_file_actions_addinherit_np(&actions, descriptor)
                #endif
                return -1
            case .descriptor(let given):
                posix_spawn_file_actions_adddup2(&actions, given, descriptor)
                return -1
            }
        }
        stdoutReader = try route(stdout, to: STDOUT_FILENO)
        stderrReader = try route(stderr, to: STDERR_FILENO)
        #if os(macOS)
        // macOS closes every descriptor no action names by POSIX_SPAWN_CLOEXEC_DEFAULT (below).
        if let directory, posix_spawn_file_actions_addchdir_np(&actions, directory) != 0 {
            throw Subprocess.Failure(description: "posix_spawn_file_actions_addchdir_np failed")
        }
        #else
        guard SpawnExtensions.closeFrom(&actions, 3) == 0 else { throw Subprocess.Failure(description: "posix_spawn_file_actions_addclosefrom_np failed") }
        if let directory, SpawnExtensions.changeDirectory(&actions, directory) != 0 {
            throw Subprocess.Failure(description: "posix_spawn_file_actions_addchdir_np failed")
        }
        #endif

        #if os(macOS)
        var attributes: posix_spawnattr_t?
        let flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_CLOEXEC_DEFAULT
        #else
        var attributes = posix_spawnattr_t()
        let flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), defaults = sigset_t()
        sigemptyset(&noSignals)
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environment.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, program, &actions, &attributes, argv, environment)
        guard spawned == 0 else {
            [stdinWriter, stdoutReader, stderrReader].filter { $0 >= 0 }.forEach { close($0) }
            throw Subprocess.Failure(description: "\(program) could not be started: \(String(cString: strerror(spawned)))")
        }
        pid = child
        #else
        throw Subprocess.Failure(description: "\(program) cannot be started: tests start programs on macOS and Linux only")
        #endif
    }

    deinit {
        if exitStatus == nil { stop() }
        [stdinWriter, stdoutReader, stderrReader].filter { $0 >= 0 }.forEach { close($0) }
    }

    /// Whether the child still runs; reaps it once it has ended.
    var isRunning: Bool {
        lock.withLock { reap(blocking: false) == nil }
    }

    /// Waits until something accepts connections on 127.0.0.1:`port` while the child runs:
    /// true then; false once the child has ended, or after `seconds`.
    func waitUntilListening(port: Int, seconds: Int = 10) async throws -> Bool {
        try await RawSocket.waitForListener(port: port, attempts: seconds * 40, while: { isRunning })
    }

    /// Feeds the input, collects the captured output and waits for the child to end; past
    /// `timeout` seconds kills its process group and throws with what it printed so far.
    func finish(timeout: TimeInterval = ChildProcess.defaultTimeout) throws -> Finished {
        let deadline = Date().addingTimeInterval(timeout)
        var stdout = Data(), stderr = Data()
        if stdinWriter >= 0 {
            _ = fcntl(stdinWriter, F_SETFL, fcntl(stdinWriter, F_GETFL) | O_NONBLOCK)
            if input.isEmpty { closeInput() }
        }
        while true {
            let ended = lock.withLock { reap(blocking: false) } != nil
            var watched: [pollfd] = []
            if stdoutReader >= 0 { watched.append(pollfd(fd: stdoutReader, events: Int16(POLLIN), revents: 0)) }
            if stderrReader >= 0 { watched.append(pollfd(fd: stderrReader, events: Int16(POLLIN), revents: 0)) }
            if stdinWriter >= 0 { watched.append(pollfd(fd: stdinWriter, events: Int16(POLLOUT), revents: 0)) }
            // Once the child has ended, whatever it wrote is already in the pipes: drain them
            // without waiting for an end of file a descendant could still hold back.
            _ = poll(&watched, nfds_t(watched.count), ended ? 0 : 50)
            for entry in watched where entry.revents != 0 {
                if entry.fd == stdinWriter {
                    writeInput()
                } else if entry.fd == stdoutReader {
                    _ = read(from: &stdoutReader, into: &stdout)
                } else if entry.fd == stderrReader {
                    _ = read(from: &stderrReader, into: &stderr)
                }
            }
            if ended {
                while stdoutReader >= 0, read(from: &stdoutReader, into: &stdout) {}
                while stderrReader >= 0, read(from: &stderrReader, into: &stderr) {}
                closeInput()
                return Finished(status: lock.withLock { exitStatus } ?? -1, stdout: stdout, stderr: stderr)
            }
            if Date() > deadline {
                kill(-pid, SIGKILL)
                _ = lock.withLock { reap(blocking: true) }
                throw Subprocess.Failure(description: "\(program) did not finish within \(Int(timeout)) s and was killed; "
                    + "it printed: \(String(decoding: stdout, as: UTF8.self)) \(String(decoding: stderr, as: UTF8.self))")
            }
        }
    }

    /// Asks the child to end (SIGTERM), waits up to 10 s, then kills its process group.
    func stop() {
        lock.withLock {
            guard reap(blocking: false) == nil else { return }
            kill(pid, SIGTERM)
            for _ in 0..<200 {
                if reap(blocking: false) != nil { return }
                usleep(50_000)
            }
            kill(-pid, SIGKILL)
            _ = reap(blocking: true)
        }
    }

    /// The exit status once the child has ended (nil while it runs). Call with `lock` held.
    private func reap(blocking: Bool) -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, blocking ? 0 : WNOHANG) } while result == -1 && errno == EINTR
        if result == -1 && errno == ECHILD {
            // Reaped elsewhere: it has ended, its status is lost. Never signal its number again.
            exitStatus = -1
            return exitStatus
        }
        guard result == pid else { return nil }
        let signal = status & 0x7f
        exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return exitStatus
    }

    /// Reads what is there; false at the end of the stream or when nothing is ready.
    private func read(from descriptor: inout Int32, into data: inout Data) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let count = POSIX.read(descriptor, &buffer, buffer.count)
        if count > 0 {
            data.append(contentsOf: buffer[0..<count])
            return true
        }
        if count == 0 || (errno != EAGAIN && errno != EINTR) {
            close(descriptor)
            descriptor = -1
        }
        return false
    }

    private func writeInput() {
        let written = input.withUnsafeBytes { write(stdinWriter, $0.baseAddress, $0.count) }
        if written > 0 { input.removeFirst(written) }
        if input.isEmpty || (written < 0 && errno != EAGAIN && errno != EINTR) { closeInput() }
    }

    private func closeInput() {
        guard stdinWriter >= 0 else { return }
        close(stdinWriter)
        stdinWriter = -1
    }
}

#if os(Linux)
/// glibc's spawn actions its headers declare only under `_GNU_SOURCE` (so Swift does not
/// see them), looked up by name; both exist since glibc 2.34.
private enum SpawnExtensions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
        guard let function = lookUp("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self) else { return -1 }
        return function(actions, lowest)
    }

    static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        guard let function = lookUp("posix_spawn_file_actions_addchdir_np", as: ChangeDirectory.self) else { return -1 }
        return function(actions, path)
    }

    private static func lookUp<F>(_ name: String, as type: F.Type) -> F? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
#endif
