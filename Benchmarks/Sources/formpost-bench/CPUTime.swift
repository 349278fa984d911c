import Foundation

/// CPU time (user and system) of a process, to set beside wall time: where the client
/// shares the cores with the server or a proxy, CPU per byte is speed.
enum CPUTime {
    /// User plus system seconds in `usage`.
    static func seconds(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// User plus system seconds this process has used so far, all its threads.
    static func ofThisProcess() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return seconds(usage)
    }

    /// The CPU seconds this process spent in `work`.
    static func spent(in work: () async throws -> Void) async rethrows -> Double {
        let before = ofThisProcess()
        try await work()
        return ofThisProcess() - before
    }
}
