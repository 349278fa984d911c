import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts `cutting_proxy.py` in front of 127.0.0.1:`target`: the first `cuts` connections
/// that carry more than `after` bytes are cut there, each cut a line of `log`.
func startCuttingProxy(to target: Int, after: Int, cuts: Int, log: String) async throws -> (ChildProcess, Int) {
    let port = try freePort()
    let proxy = try ChildProcess("python3", [Subprocess.interopScript("cutting_proxy.py"), String(port), String(target), String(after), String(cuts), log],
                                 stdout: .discard, stderr: .discard)
    try await RawSocket.waitForListener(port: port, attempts: 200)
    return (proxy, port)
}

/// Two runs of `formpost` (its state under `stateHome`): the first, limited to 8 MB/s, is
/// killed with SIGKILL once the receiver's `stateDirectory` (`.tus` or `.resumable`) holds
/// more than its first request of 8 MiB — in the middle of the second; the second, run
/// again as a user would after a crash (with retries for a loaded machine's hiccups and
/// `--json`), with `again` added. Returns how the first ended, and the second.
func killedAndRunAgain(_ arguments: [String], again: [String] = [], stateHome: String, stateDirectory: String) async throws -> (first: Int32, second: ChildProcess.Finished) {
    let environment = "XDG_STATE_HOME=" + stateHome
    let first = try await offPool { () -> Int32 in
        let child = try ChildProcess("env", [environment, formpostBinary, "-s", "--limit-rate", "8M"] + arguments, stdout: .discard, stderr: .discard)
        waitUntilStored(in: stateDirectory, moreThan: 8 << 20)
        kill(child.pid, SIGKILL)
        return try child.finish().status
    }
    let second = try await offPool {
        try ChildProcess("env", [environment, formpostBinary, "--retry", "3", "--json"] + again + arguments).finish()
    }
    return (first, second)
}

/// Checks what ``killedAndRunAgain(_:again:stateHome:stateDirectory:)`` gave for a file of
/// `size` bytes whose SHA-256 is `expected`: the first run killed, the second resumed
/// (`--json`: resumed from some bytes, sending the rest alone), and the file stored once in
/// `uploads`.
func expectResumedAfterKill(first: Int32, second: ChildProcess.Finished, size: Int, uploads: String, expected: String) throws {
    #expect(first == -SIGKILL || first == 128 + SIGKILL || first == SIGKILL, "the first run ended by SIGKILL, not with \(first)")
    #expect(second.status == 0, "\(String(decoding: second.stderr, as: UTF8.self))")
    let summary = try #require(try JSONSerialization.jsonObject(with: second.stdout) as? [String: Any])
    let resumedFrom = try #require(summary["resumed_from"] as? Int)
    let sent = try #require(summary["bytes_sent"] as? Int)
    #expect(resumedFrom > 0 && sent < size && resumedFrom + sent == size, "resumed from \(resumedFrom), sent \(sent)")
    let stored = try FileManager.default.contentsOfDirectory(atPath: uploads).filter { !$0.hasPrefix(".") }
    #expect(stored.count == 1, "\(stored)")
    #expect(sha256Hex(try Data(contentsOf: URL(fileURLWithPath: uploads + "/" + (stored.first ?? "")))) == expected)
}
