import Foundation

/// Ceph's RADOS Gateway, a real S3 implementation (Debian's `ceph` and `radosgw` 16.2), as a
/// one-node cluster on 127.0.0.1 for one test (`scripts/ceph/start-rgw.sh`: a monitor, one
/// OSD in memory, the gateway), with a user and a bucket; what it holds is read back with
/// boto3 (Tests/Interop/s3_objects.py). Stopped, its files removed, when released.
final class CephGateway: Sendable {
    let port: Int
    let bucket = "test-bucket"
    let directory: String
    static let accessKey = "TESTACCESSKEY0000001"
    static let secretKey = "testsecretkey000000000000000000000000001"
    static let credentials = ["AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey]

    init() async throws {
        port = try freePort()
        let monitorPort = try freePort()
        directory = NSTemporaryDirectory() + "formpost-rgw-" + UUID().uuidString
        let environment = ["CEPH_DIR=" + directory, "RGW_PORT=\(port)", "MON_PORT=\(monitorPort)", "S3_BUCKET=" + bucket,
                           "S3_ACCESS_KEY=" + Self.accessKey, "S3_SECRET_KEY=" + Self.secretKey, "OSD_SIZE_MB=1024"]
        let started = try await offPool { try ChildProcess("env", environment + ["bash", Self.script("start-rgw.sh")]).finish(timeout: 180) }
        guard started.status == 0 else {
            throw Subprocess.Failure(description: "Ceph RGW did not start: \(String(decoding: started.stdout + started.stderr, as: UTF8.self))")
        }
    }

    deinit {
        _ = try? ChildProcess("env", ["CEPH_DIR=" + directory, "bash", Self.script("stop-rgw.sh"), "--purge"], stdout: .discard, stderr: .discard)
            .finish(timeout: 60)
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// The package's `scripts/ceph/NAME`.
    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/ceph/" + name).path
    }

    /// The bucket's contents, read with boto3.
    func contents() async throws -> MotoStore.Contents {
        let arguments = Self.credentials + ["python3", Subprocess.interopScript("s3_objects.py"), endpoint, bucket]
        let output = try await offPool { try Subprocess.runForBytes("env", arguments) }
        return try JSONDecoder().decode(MotoStore.Contents.self, from: output)
    }
}
