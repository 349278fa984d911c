import ArgumentParser

/// Resumable uploads: `--resumable tus` (with `-T FILE`) or `--resumable ietf` (with `-T`
/// or `-F`), and the largest request.
struct ResumableOptions: ParsableArguments {
    @Option(name: .customLong("resumable"), help: "Upload resumably with this protocol: tus (-T FILE; URL is the creation endpoint) or ietf (the IETF draft; -T FILE or -F; URL is the target). Running the same command again resumes.")
    var mode: String?
    @Option(name: .customLong("chunk-size"), help: "With --resumable, the largest single request: bytes or K/M/G (64M).")
    var chunkSize = "64M"
    @Flag(name: .customLong("tus-checksum"), help: "With --resumable tus, each request carries a checksum when the server verifies them (SHA-256, else SHA-1).")
    var tusChecksum = false
    @Option(name: .customLong("parallel"), help: "With --resumable tus, send the file as this many partial uploads at once (1 to 9), joined by the server (tus concatenation); one upload when the server lacks it or the file is under 2 MiB.")
    var parallel = 1
}
