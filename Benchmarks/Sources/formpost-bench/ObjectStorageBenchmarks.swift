#if os(Linux)
import Foundation

/// `formpost-bench object-storage`: `formpost serve --store` into moto's S3 server (from
/// PyPI: on this machine the store is moto, so the ratios measure FormPost's overhead over
/// moto, not S3's speed) against the same upload into `formpost serve --dir`, alternating,
/// each receiver its own process: a multipart form sent by `curl -F`, then a tus upload
/// (`formpost --resumable tus`) and an IETF-draft upload (`--resumable ietf`) through a
/// proxy that sends each connection to the next of two receivers on one bucket, against the
/// same upload to one directory receiver. Each
/// row gives each receiver's peak resident set (`VmHWM`, reset before the row). Last, moto's
/// own speed for the same bytes: boto3's `upload_file` into the same moto.
///
/// Needs `FORMPOST_BIN` (a release `formpost`), and a Python with moto and boto3 (`PYTHON`,
/// `python3` unless set; the tests' `.venv-test/bin/python3` has them).
struct ObjectStorageBenchmarks {
    let size: Int
    let runs: Int
    let directory: String

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

        let motoPort = LocalPorts.free()
        let moto = try Self.launch(python, ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(motoPort)], quiet: true)
        defer { Self.kill(moto) }
        try LocalPorts.waitForListener(motoPort)
        let endpoint = "http://127.0.0.1:\(motoPort)"
        try Self.python(python, Self.bucketScript, [endpoint, "create"])
        let store = ["--store", "s3://\(Self.bucket)/bench", "--s3-endpoint", endpoint, "--s3-path-style", "--no-page"]

        let s3Port = LocalPorts.free(), directoryPort = LocalPorts.free()
        let s3Server = try Self.launch(formpost, ["serve", "--port", String(s3Port), "--dir", directory + "/unused-a"] + store)
        let directoryServer = try Self.launch(formpost, ["serve", "--port", String(directoryPort), "--dir", directory + "/stored", "--no-page",
                                                         "--max-body-size", "100G", "--max-file-size", "100G"])
        defer {
            s3Server.terminate()
            directoryServer.terminate()
        }
        try LocalPorts.waitForListener(s3Port)
        try LocalPorts.waitForListener(directoryPort)

        let empty = { try Self.python(python, Self.bucketScript, [endpoint, "empty"]) }
        let clearStored = { try StoredFiles.clear(self.directory + "/stored") }
        let form = { (port: Int) in
            let answer = try Self.output("curl", ["-sS", "-F", "file=@" + source, "http://127.0.0.1:\(port)/upload"])
            guard answer.contains("\"size\":\(self.size)") else { throw BenchmarkFailure("the form was answered \(answer.prefix(300))") }
        }
        for server in [s3Server, directoryServer] { ProcessFigures.resetPeak(server.processIdentifier) }
        let forms = try await Measurement.alternate(runs: runs, ours: { try form(s3Port); try empty() }, theirs: { try form(directoryPort); try clearStored() })
        BenchmarkResult(workload: "serve-form-into-s3", bytes: Int64(size), ours: forms.ours, reference: "the same form into --dir", theirs: forms.theirs,
                        peakRSS: ProcessFigures.peakRSS(s3Server.processIdentifier), referencePeakRSS: ProcessFigures.peakRSS(directoryServer.processIdentifier)).printLine()

        // Two receivers on the bucket, and a proxy alternating connections between them.
        let receiverPorts = [LocalPorts.free(), LocalPorts.free()], proxyPort = LocalPorts.free()
        let receivers = try receiverPorts.enumerated().map { index, port in
            try Self.launch(formpost, ["serve", "--port", String(port), "--dir", directory + "/unused-\(index)"] + store)
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
            let state = self.directory + "/resumable-state-\(attempt)"
            let target = "http://127.0.0.1:\(port)" + (protocolName == "tus" ? "/files" : "/upload")
            let answer = try Self.output("env", ["XDG_STATE_HOME=" + state, formpost, "-s", "--json", "--resumable", protocolName, "--chunk-size", "64M",
                                                 "-T", source, target])
            try? FileManager.default.removeItem(atPath: state)
            guard answer.contains("\"bytes_sent\":\(self.size)") else { throw BenchmarkFailure("the \(protocolName) upload ended \(answer.prefix(300))") }
        }
        for protocolName in ["tus", "ietf"] {
            for server in receivers + [directoryServer] { ProcessFigures.resetPeak(server.processIdentifier) }
            let uploads = try await Measurement.alternate(runs: runs, ours: { try resumable(protocolName, proxyPort); try empty() },
                                                          theirs: { try resumable(protocolName, directoryPort); try clearStored() })
            BenchmarkResult(workload: "\(protocolName)-into-s3-two-receivers", bytes: Int64(size), ours: uploads.ours,
                            reference: "the same \(protocolName) upload into --dir", theirs: uploads.theirs,
                            peakRSS: receivers.map { ProcessFigures.peakRSS($0.processIdentifier) }.max() ?? 0,
                            referencePeakRSS: ProcessFigures.peakRSS(directoryServer.processIdentifier)).printLine()
        }

        // moto's own speed for the same bytes, with boto3 (its default multipart transfers).
        var own: [Double] = []
        for _ in 0...runs {
            own.append(Double(try Self.output(python, ["-c", Self.bucketScript, endpoint, "upload", source]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan)
            try empty()
        }
        let seconds = Measurement.median(Array(own.dropFirst()))
        let line = "{\"bytes\":\(size),\"mbps\":\(Double(size) / seconds / 1e6),\"seconds\":\(seconds),\"workload\":\"moto-boto3-upload-file\"}\n"
        FileHandle.standardOutput.write(Data(line.utf8))
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
