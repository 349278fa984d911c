#if os(Linux)
import Foundation

/// What Linux's `/proc` tells of a running process: its CPU time, its resident set now and
/// at its peak, and its children.
enum ProcessFigures {
    /// The CPU seconds (user and system, all threads) process `pid` has used so far.
    static func cpuSeconds(_ pid: Int32) -> Double {
        let fields = statFields(pid)
        // utime and stime are the 12th and 13th fields after the command's closing parenthesis.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The peak resident set (`VmHWM`) of process `pid`, in bytes.
    static func peakRSS(_ pid: Int32) -> Int64 { statusField("VmHWM:", of: pid) }

    /// The resident set now (`VmRSS`) of process `pid`, in bytes.
    static func residentRSS(_ pid: Int32) -> Int64 { statusField("VmRSS:", of: pid) }

    /// Resets the peak resident set of process `pid` to its current one.
    static func resetPeak(_ pid: Int32) {
        try? "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The processes whose parent is `pid`.
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { child in
            // The parent is the 2nd field after the command's closing parenthesis.
            let fields = statFields(child)
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    /// The fields of `/proc/PID/stat` after the command (which may hold spaces), from the state on.
    private static func statFields(_ pid: Int32) -> [Substring] {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat[(stat.lastIndex(of: ")").map { stat.index(after: $0) } ?? stat.startIndex)...].split(separator: " ")
    }

    /// A `kB` field of `/proc/PID/status`, in bytes (0 when the process is gone).
    private static func statusField(_ name: String, of pid: Int32) -> Int64 {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
        return (Int64(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
#endif
