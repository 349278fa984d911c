#if os(macOS) || os(Linux)
import Foundation
import Multipart

/// What the 1 GiB upload benchmarks share: a file of `size` random bytes in `directory`, a
/// form of one file part holding it, and a byte sink in another process, for the time of
/// `body` (the file is removed and the sink stopped after it).
func withFileFormAndSink(size: Int, directory: String,
                         _ body: (_ source: String, _ form: MultipartForm, _ sinkPort: UInt16) async throws -> Void) async throws {
    let source = directory + "/upload.bin"
    try Filler.file(at: source, count: size)
    defer { unlink(source) }
    let sink = try SinkProcess.launched()
    defer { sink.stop() }
    var form = MultipartForm()
    try form.append(name: "file", fileAt: source)
    try await body(source, form, sink.port)
}
#endif
