#if os(Linux)
import Foundation

/// The peak resident set (`VmHWM` in `/proc/PID/status`) of process `pid` (this process when
/// nil), in KiB. Linux only.
func peakResidentKiB(of pid: pid_t? = nil) throws -> Int {
    let path = "/proc/" + (pid.map { String($0) } ?? "self") + "/status"
    let status = try String(contentsOfFile: path, encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
        throw PeakResidentSetUnknown(path: path)
    }
    return kib
}

/// `/proc` did not say a process's peak resident set.
struct PeakResidentSetUnknown: Error, CustomStringConvertible {
    let path: String
    var description: String { "no VmHWM in \(path)" }
}
#endif
