#if os(Linux)
import Foundation

/// Ceph's RADOS Gateway for the benchmarks: a one-node cluster started by the package's
/// `scripts/ceph/start-rgw.sh` (its object store in memory, 6 GiB), on free ports, with
/// one bucket and the given credentials.
struct CephGatewayProcess {
    /// Where the gateway answers S3's API.
    let endpoint: String
    /// The cluster's configuration, data and logs.
    let directory: String

    /// Starts one in `directory` with `bucket` and `credentials` (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`), or answers nil when `radosgw` is not installed.
    static func startIfInstalled(directory: String, bucket: String, credentials: [String: String]) throws -> CephGatewayProcess? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/radosgw") else { return nil }
        let port = LocalPorts.free()
        let gateway = CephGatewayProcess(endpoint: "http://127.0.0.1:\(port)", directory: directory)
        do {
            try gateway.script("start-rgw.sh", [], environment: [
                "RGW_PORT": String(port), "MON_PORT": String(LocalPorts.free()), "S3_BUCKET": bucket, "OSD_SIZE_MB": "6144",
                "S3_ACCESS_KEY": credentials["AWS_ACCESS_KEY_ID"] ?? "", "S3_SECRET_KEY": credentials["AWS_SECRET_ACCESS_KEY"] ?? "",
            ])
        } catch {
            // What started of the cluster goes too.
            gateway.stop()
            throw error
        }
        return gateway
    }

    /// Frees what removed objects held now: the gateway's garbage collection otherwise
    /// waits hours, and a store in memory fills.
    func collectGarbage() throws {
        try Self.run("radosgw-admin", ["-c", directory + "/ceph.conf", "gc", "process", "--include-all"], environment: [:])
    }

    /// Stops the cluster and removes its directory.
    func stop() {
        try? script("stop-rgw.sh", ["--purge"], environment: [:])
    }

    private func script(_ name: String, _ arguments: [String], environment: [String: String]) throws {
        try Self.run("bash", [ObjectStorageBenchmarks.repository + "/scripts/ceph/" + name] + arguments,
                     environment: environment.merging(["CEPH_DIR": directory]) { $1 })
    }

    /// Runs `program` with `arguments`, its output discarded; it must exit 0.
    private static func run(_ program: String, _ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Waited for here: Foundation's waitUntilExit never returned once the start script
        // had left the cluster's daemons running (they keep what tells it of the exit).
        // Foundation may reap the child first (waitpid then fails with ECHILD): its status is
        // then Foundation's, once it says the process ended.
        var status: Int32 = 0
        var waited: pid_t
        repeat { waited = waitpid(process.processIdentifier, &status, 0) } while waited < 0 && errno == EINTR
        if waited < 0, errno == ECHILD {
            let deadline = Date().addingTimeInterval(120)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            guard !process.isRunning else { throw BenchmarkFailure("\(program) \(arguments.prefix(2)): its end was not seen") }
            status = process.terminationStatus == 0 && process.terminationReason == .exit ? 0 : process.terminationStatus
        } else if waited != process.processIdentifier {
            throw BenchmarkFailure("\(program) \(arguments.prefix(2)): its end was not seen (\(errno))")
        }
        guard status == 0 else { throw BenchmarkFailure("\(program) \(arguments.prefix(2)) ended with wait status \(status)") }
    }
}
#endif
