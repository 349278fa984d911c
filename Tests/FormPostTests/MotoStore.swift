import Foundation
import FormPostServer

/// moto's S3 server (from PyPI), a real implementation of S3's API, on 127.0.0.1 for one
/// test, with a bucket made for it; what it holds is read back with boto3
/// (Tests/Interop/s3_objects.py). moto takes any credentials.
final class MotoStore: Sendable {
    let port: Int
    let bucket = "formpost-test"
    private let server: ChildProcess

    static let credentials = ["AWS_ACCESS_KEY_ID=formpost-test", "AWS_SECRET_ACCESS_KEY=formpost-test-secret"]

    init() async throws {
        port = try freePort()
        server = try ChildProcess("python3", ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)], stdout: .discard, stderr: .discard)
        try await RawSocket.waitForListener(port: port, attempts: 1200)
        _ = try await Self.read(port: port, bucket: bucket, create: true)
    }

    deinit { server.stop() }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Storage in the test's bucket under `prefix`, through `port` (a proxy's) or moto's own.
    func storage(prefix: String = "uploads", through port: Int? = nil) -> ObjectStorage {
        ObjectStorage(bucket: bucket, prefix: prefix, endpoint: "http://127.0.0.1:\(port ?? self.port)", pathStyle: true,
                      accessKeyID: "formpost-test", secretAccessKey: "formpost-test-secret")
    }

    /// One object, as boto3 read it back.
    struct Object: Decodable {
        let key: String
        let size: Int
        let sha256: String
        let contentType: String?
        let metadata: [String: String]
        let tags: [String: String]
    }

    /// What the bucket holds: its objects, and the keys of multipart uploads still in progress.
    struct Contents: Decodable {
        let objects: [Object]
        let multipartUploads: [String]
    }

    /// The bucket's contents, read with boto3.
    func contents() async throws -> Contents {
        try await Self.read(port: port, bucket: bucket, create: false)
    }

    private static func read(port: Int, bucket: String, create: Bool) async throws -> Contents {
        let arguments = credentials + ["python3", Subprocess.interopScript("s3_objects.py"), "http://127.0.0.1:\(port)", bucket] + (create ? ["--create"] : [])
        let output = try await offPool { try Subprocess.runForBytes("env", arguments) }
        return try JSONDecoder().decode(Contents.self, from: output)
    }
}
