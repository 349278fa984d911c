import ArgumentParser

/// Resumable uploads: `--resumable tus` with `-T FILE`, and the largest request.
struct ResumableOptions: ParsableArguments {
    @Option(name: .customLong("resumable"), help: "Upload -T FILE resumably with this protocol: tus (URL is the creation endpoint). Running the same command again resumes.")
    var mode: String?
    @Option(name: .customLong("chunk-size"), help: "With --resumable, the largest single request: bytes or K/M/G (64M).")
    var chunkSize = "64M"
}
