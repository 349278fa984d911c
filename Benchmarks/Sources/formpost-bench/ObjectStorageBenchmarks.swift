#if os(Linux)
import Foundation

/// `formpost-bench object-storage`: `formpost serve --store` into moto's S3 server (from
/// PyPI), then into Ceph's RADOS Gateway (a real S3, a one-node cluster started by
/// `scripts/ceph/start-rgw.sh` when `radosgw` is installed), each on this machine: the
/// store shares the machine's cores with the receiver. For each store: a multipart form
/// sent by `curl -F` against boto3's `upload_file` of the same file into the same bucket,
/// alternating; then a tus upload (`formpost --resumable tus`) and an IETF-draft upload
/// (`--resumable ietf`) through a proxy that sends each connection to the next of two
/// receivers on one bucket, against the same upload to one directory receiver
/// (`formpost serve --dir`). Each receiver is its own process; each row gives the peak
/// resident set of the receivers on the bucket (`VmHWM`, reset before the row). The bucket
/// is emptied before each run, untimed.
///
/// Needs `FORMPOST_BIN` (a release `formpost`), and a Python with moto and boto3 (`PYTHON`,
/// `python3` unless set; the tests' `.venv-test/bin/python3` has them).
struct ObjectStorageBenchmarks {
    let size: Int
    let runs: Int
    let directory: String
    /// The stores to measure (`s3`: moto, `rgw`), or nil for both.
    let only: Set<String>?

    /// The repository, for the tests' interop scripts (the alternating proxy).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let bucket = "formpost-bench"
    static let credentials = ["AWS_ACCESS_KEY_ID": "formpost-bench", "AWS_SECRET_ACCESS_KEY": "formpost-bench-secret", "AWS_REGION": "us-east-1"]

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let formpost = environment["FORMPOST_BIN"] else { throw BenchmarkFailure("set FORMPOST_BIN to a release formpost") }
        let python = environment["PYTHON"] ?? "python3"
        let source = directory + "/upload.bin"
        try Filler.file(at: source, count: size)
        defer { unlink(source) }

        let directoryPort = LocalPorts.free()
        let directoryServer = try Self.launch(formpost, ["serve", "--port", String(directoryPort), "--dir", directory + "/stored", "--no-page",
                                                         "--max-body-size", "100G", "--max-file-size", "100G"])
        defer { directoryServer.terminate() }
        try LocalPorts.waitForListener(directoryPort)
        let reference = Reference(server: directoryServer, port: directoryPort, clear: { try StoredFiles.clear(self.directory + "/stored") })

        if only?.contains("s3") ?? true {
            let motoPort = LocalPorts.free()
            let moto = try Self.launch(python, ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(motoPort)], quiet: true)
            defer { Self.kill(moto) }
            try LocalPorts.waitForListener(motoPort)
            try Self.python(python, Self.bucketScript, ["http://127.0.0.1:\(motoPort)", "create"])
            try await measure(into: "s3", endpoint: "http://127.0.0.1:\(motoPort)", formpost: formpost, python: python, source: source, reference: reference)
        }
        guard only?.contains("rgw") ?? true else { return }
        guard let gateway = try CephGatewayProcess.startIfInstalled(directory: directory + "/ceph", bucket: Self.bucket, credentials: Self.credentials) else {
            FileHandle.standardError.write(Data("formpost-bench: no /usr/bin/radosgw: the Ceph RGW rows are left out\n".utf8))
            return
        }
        defer { gateway.stop() }
        try await measure(into: "rgw", endpoint: gateway.endpoint, formpost: formpost, python: python, source: source, reference: reference,
                          afterEmptying: gateway.collectGarbage)
    }

    /// The directory receiver each store's rows compare with.
    struct Reference {
        let server: Process
        let port: Int
        let clear: () throws -> Void
    }

    /// The rows of one store (`name` in the workloads) at `endpoint`, whose bucket exists: a
    /// form into `formpost serve --store` against boto3's `upload_file` of the same file,
    /// alternating; then tus and IETF-draft uploads across two receivers on the bucket against
    /// the same upload into `--dir`. `afterEmptying` runs after each emptying of the bucket
    /// (RGW's garbage collection: its removals free space later).
    private func measure(into name: String, endpoint: String, formpost: String, python: String, source: String, reference: Reference,
                         afterEmptying: @escaping () throws -> Void = {}) async throws {
        let store = ["--store", "s3://\(Self.bucket)/bench", "--s3-endpoint", endpoint, "--no-page"]
        let empty = {
            try Self.python(python, Self.bucketScript, [endpoint, "empty"])
            try afterEmptying()
        }
        let s3Port = LocalPorts.free()
        let s3Server = try Self.launch(formpost, ["serve", "--port", String(s3Port), "--dir", directory + "/unused-\(name)"] + store)
        defer { s3Server.terminate() }
        try LocalPorts.waitForListener(s3Port)

        // The form against boto3, each timed alone (boto3 inside Python: no interpreter
        // start-up; the form with curl's), which goes first alternating from run to run.
        ProcessFigures.resetPeak(s3Server.processIdentifier)
        let form = {
            try empty()
            return try await Measurement.time {
                let answer = try Self.output("curl", ["-sS", "-F", "file=@" + source, "http://127.0.0.1:\(s3Port)/upload"])
                guard answer.contains("\"size\":\(self.size)") else { throw BenchmarkFailure("the form was answered \(answer.prefix(300))") }
            }
        }
        let upload = {
            try empty()
            let printed = try Self.output(python, ["-c", Self.bucketScript, endpoint, "upload", source]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let seconds = Double(printed) else { throw BenchmarkFailure("boto3's upload printed \(printed.prefix(300))") }
            return seconds
        }
        var forms: [Double] = [], boto3: [Double] = []
        for run in 0...runs {
            let formSeconds: Double, botoSeconds: Double
            if run % 2 == 0 {
                formSeconds = try await form()
                botoSeconds = try upload()
            } else {
                botoSeconds = try upload()
                formSeconds = try await form()
            }
            if run > 0 {
                forms.append(formSeconds)
                boto3.append(botoSeconds)
            }
        }
        try empty()
        BenchmarkResult(workload: "serve-form-into-\(name)", bytes: Int64(size), ours: forms,
                        reference: "boto3 upload_file of the same file into the same store (8 MiB parts, 10 at once)", theirs: boto3,
                        peakRSS: ProcessFigures.peakRSS(s3Server.processIdentifier)).printLine()

        // Two receivers on the bucket, and a proxy alternating connections between them.
        let receiverPorts = [LocalPorts.free(), LocalPorts.free()], proxyPort = LocalPorts.free()
        let receivers = try receiverPorts.enumerated().map { index, port in
            try Self.launch(formpost, ["serve", "--port", String(port), "--dir", directory + "/unused-\(name)-\(index)"] + store)
        }
        let proxy = try Self.launch(python, [Self.repository + "/Tests/Interop/cutting_proxy.py", String(proxyPort),
                                             receiverPorts.map(String.init).joined(separator: ","), "0", "0", directory + "/cuts.log"], quiet: true)
        defer {
            Self.kill(proxy)
            for receiver in receivers { receiver.terminate() }
        }
        for port in receiverPorts + [proxyPort] { try LocalPorts.waitForListener(port) }
        var attempt = 0
        let resumable = { (protocolName: String, port: Int) in
            attempt += 1
            let state = self.directory + "/resumable-state-\(name)-\(attempt)"
            let target = "http://127.0.0.1:\(port)" + (protocolName == "tus" ? "/files" : "/upload")
            let answer = try Self.output("env", ["XDG_STATE_HOME=" + state, formpost, "-s", "--json", "--resumable", protocolName, "--chunk-size", "64M",
                                                 "-T", source, target])
            try? FileManager.default.removeItem(atPath: state)
            guard answer.contains("\"bytes_sent\":\(self.size)") else { throw BenchmarkFailure("the \(protocolName) upload ended \(answer.prefix(300))") }
        }
        for protocolName in ["tus", "ietf"] {
            for server in receivers + [reference.server] { ProcessFigures.resetPeak(server.processIdentifier) }
            let uploads = try await Measurement.alternate(runs: runs, prepare: { try empty(); try reference.clear() },
                                                          ours: { try resumable(protocolName, proxyPort) },
                                                          theirs: { try resumable(protocolName, reference.port) })
            try empty()
            BenchmarkResult(workload: "\(protocolName)-into-\(name)-two-receivers", bytes: Int64(size), ours: uploads.ours,
                            reference: "the same \(protocolName) upload into --dir", theirs: uploads.theirs,
                            peakRSS: receivers.map { ProcessFigures.peakRSS($0.processIdentifier) }.max() ?? 0,
                            referencePeakRSS: ProcessFigures.peakRSS(reference.server.processIdentifier)).printLine()
        }
    }

    /// The bucket, by boto3: `create` it, `empty` it (objects and multipart uploads), or
    /// `upload` a file (printing the seconds `upload_file` took).
    static let bucketScript = """
    import sys, time, boto3
    from botocore.config import Config
    s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
    bucket = "\(bucket)"
    if sys.argv[2] == "create":
        s3.create_bucket(Bucket=bucket)
    elif sys.argv[2] == "empty":
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=item["Key"])
        for upload in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
    elif sys.argv[2] == "upload":
        start = time.monotonic()
        s3.upload_file(sys.argv[3], bucket, "boto3/upload.bin")
        print(time.monotonic() - start)
    """

    private static func python(_ python: String, _ script: String, _ arguments: [String]) throws {
        _ = try output(python, ["-c", script] + arguments)
    }

    /// Starts `program` (found on `PATH` unless a path) with the credentials in its environment.
    private static func launch(_ program: String, _ arguments: [String], quiet: Bool = false) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(credentials) { $1 }
        process.standardOutput = FileHandle.nullDevice
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        return process
    }

    /// What `program` printed; it must exit 0.
    private static func output(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(credentials) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkFailure("\(program) \(arguments.prefix(3)) exited \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// Ends `process` with SIGKILL and waits for it: the Python helpers (moto, the proxy)
    /// outlived `terminate()` (still running after the bench, and after a `kill -TERM`).
    private static func kill(_ process: Process) {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
#endif
